// A raw snappy block as pieces: its decompressed bytes are the pieces laid
// end to end, and its literals' pieces are views of the block as stored,
// never copied. Incompressible data (random bytes, JPEGs) is nearly all
// literals, so a reader of such blocks (formats/parquet's PLAIN byte-array
// pages) can use views of the block where libsnappy would copy every byte.
// The tags are read by snappy_codec.cc's one tag reader, as CheckTags reads
// them for Decompress. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace sluice {

// The pieces of one block, in order, and the offset of each in the
// decompressed bytes. Reused from block to block (no allocation once grown).
struct SnappyBody {
  std::vector<std::string_view> pieces;  // each at least 1 byte
  std::vector<uint64_t> starts;
  uint64_t scratch_used = 0;  // scratch[0, scratch_used) holds the other pieces
};

// True when `data` is a whole, well-formed raw snappy block of at most
// `capacity` bytes whose copies make at most an eighth of it, and whose
// output so far, at each 64 KiB of it, came in tags of 64 bytes on
// average with copies of at most an eighth (a block of short tags is
// refused in its first 64 KiB, not once walked whole): *body then holds
// its pieces, exactly the size its header declares. Literals of 16 bytes
// or more are views of `data`; copies and shorter literals are written to
// `scratch` (capacity bytes) one after another from its start and are
// views of it: scratch is touched only as far as they need.
// False otherwise, with scratch partly written: a compressible block or
// one of short tags, a bad or oversized header, a tag cut short, a copy
// reaching before the start, bytes past the declared size or too few.
// False says nothing of why: decompress the block (Decompress,
// DecompressInto) for the error.
bool SnappyPieces(std::string_view data, char* scratch, uint64_t capacity, SnappyBody* body);

}  // namespace sluice

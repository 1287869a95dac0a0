// DELTA_BINARY_PACKED for INT32 and INT64 columns, and the lengths inside
// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.
//
// Layout: a header of ULEB128 block size (a positive multiple of 128),
// ULEB128 miniblocks per block (block size / miniblocks a multiple of 32),
// ULEB128 total value count and the zigzag first value; then, while values
// remain after the first, blocks of: the zigzag min delta, one bit-width
// byte per miniblock, and the bit-packed miniblocks. Miniblocks past the
// last value have no bytes (their width bytes are present and ignored);
// the last one that holds values is padded to its full size.
//
// Arithmetic wraps around in two's complement at the column's width, as the
// specification requires (a value is the previous one plus min delta plus
// the packed delta, modulo 2^32 or 2^64). Miniblock widths of up to 64 bits
// are accepted for both types (the high bits fall off for INT32).
//
// Checks, each before use: the header's fields (block size at most 2^31 -
// 128 values, miniblock count and width ranges), every width byte (at most
// 64), every miniblock's bytes against what is left, and the caller's count
// against the header's total. Nothing is allocated from a declared number.
//
// A decoder borrows the stream's bytes (they must outlive it) and is a
// cursor: not thread-safe; a copy continues independently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {

template <typename T>  // int32_t or int64_t
class DeltaBinaryPackedDecoder {
 public:
  // Reads the header at the start of `stream` (which may continue past the
  // encoded values: see EncodedSize). `encoding` and `base_offset` name the
  // encoding and where `stream` starts in errors.
  static Result<DeltaBinaryPackedDecoder> Create(std::string_view stream,
                                                 std::string_view encoding = "DELTA_BINARY_PACKED",
                                                 uint64_t base_offset = 0);

  // The header's total value count, and how many are still to be decoded.
  uint64_t total_count() const { return total_; }
  uint64_t values_left() const { return total_ - decoded_; }

  // Decodes the next `count` values into out[0..count). Errors: `count`
  // above values_left() ("expected <count> values, found <left> (the
  // header's total is <total>)"), a bad block (width above 64, bytes
  // missing). After an error the decoder must not be used again.
  Status Decode(size_t count, T* out);

  // The size in bytes of the whole encoded stream (header and every block
  // up to the last value), found by walking the block headers from the
  // start without unpacking: where what follows it begins (the bytes of
  // DELTA_LENGTH_BYTE_ARRAY, the suffixes of DELTA_BYTE_ARRAY). Costs time
  // in proportion to the bytes walked; independent of this cursor's position.
  Result<size_t> EncodedSize() const;

 private:
  DeltaBinaryPackedDecoder(std::string_view stream, std::string_view encoding,
                           uint64_t base_offset)
      : stream_(stream), in_(stream, encoding, base_offset) {}

  static constexpr size_t kChunk = 128;  // deltas unpacked at a time

  Status ReadHeader();
  // Reads a block's min delta and skips its width bytes; `*widths` and
  // `*widths_at` get where they are.
  Status StartBlock(SectionReader& in, uint64_t* min_delta, const uint8_t** widths,
                    uint64_t* widths_at) const;
  // Checks miniblock `index`'s width byte and that its bytes follow in `in`.
  Status CheckMiniblock(const SectionReader& in, const uint8_t* widths, uint64_t widths_at,
                        uint64_t index, unsigned* width, size_t* bytes) const;
  // Unpacks the next chunk of deltas into buf_ (starting the next
  // miniblock or block when the current one is used up).
  Status Refill();

  std::string_view stream_;
  SectionReader in_;
  // Header.
  uint64_t block_size_ = 0;
  uint64_t miniblocks_ = 0;
  uint64_t per_miniblock_ = 0;
  uint64_t total_ = 0;
  uint64_t first_ = 0;
  size_t header_size_ = 0;
  // Position.
  uint64_t decoded_ = 0;
  uint64_t last_ = 0;  // the last value produced, as unsigned bits
  // The current block and miniblock.
  uint64_t min_delta_ = 0;
  const uint8_t* widths_ = nullptr;  // the block's width bytes
  uint64_t widths_at_ = 0;           // their offset, for errors
  uint64_t next_miniblock_ = 0;      // in the block; miniblocks_ = start a new block
  unsigned width_ = 0;               // the current miniblock's width
  uint64_t mini_left_ = 0;           // its values not yet unpacked
  const uint8_t* packed_ = nullptr;  // their bits (byte-aligned)
  size_t packed_bytes_ = 0;
  uint64_t buf_[kChunk] = {};        // unpacked deltas
  size_t buf_pos_ = 0;
  size_t buf_len_ = 0;
};

extern template class DeltaBinaryPackedDecoder<int32_t>;
extern template class DeltaBinaryPackedDecoder<int64_t>;

}  // namespace sluice::parquet

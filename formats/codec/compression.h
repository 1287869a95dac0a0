// Whole-file compression as Mosaic names it: "zstd", "zstd:19", "br", "br:5",
// "gz", "gz:6", "bz2", "bz2:1", "snappy". One compressed stream per file.
//
// Formats (what Mosaic writes and reads):
//   zstd    a standard zstd frame; default level 3 (Mosaic's Zstandard).
//           Decoding also accepts concatenated and skippable frames.
//   br      a raw brotli stream, generic mode, 22-bit window; default
//           quality 11.
//   gz      a gzip member (RFC 1952); default level 9. Sluice writes the
//           header as Python's gzip.compress does with a write time (XFL by
//           level, OS 255) but with mtime 0, so its output is reproducible.
//           Decoding accepts any gzip member (optional header fields),
//           several members, and NUL padding between or after them.
//   bz2     a bzip2 stream; default level 9. Decoding accepts several streams.
//   snappy  the raw snappy block format (not the framing format); no level.
// With Debian 12's libraries, Compress reproduces Mosaic's stored bytes
// (except gz's write time), though only the raw bytes are a contract.
//
// All functions are pure and thread-safe; results are owned by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/env.h"
#include "base/status.h"

namespace sluice {

struct Compression {
  std::string family;        // "zstd", "br", "gz", "bz2", "snappy"
  std::optional<int> level;  // unset = the family's default (Mosaic's)
  std::string name;          // as given, e.g. "zstd:19" (goes into index.json)
};

// Parses and validates a name exactly as Mosaic spells them: the family, or
// "<family>:<level>" with a plain decimal level (no sign, no leading zero).
// Levels: br 0-11, bz2 1-9, gz 0-9, zstd 1-22; snappy takes none.
// Unknown family -> kUnimplemented; a bad or missing level, or a level on
// snappy -> kInvalidArgument. Messages name the input and the valid range.
Result<Compression> ParseCompression(std::string_view name);

// File extension appended to compressed shard names: the family.
// The reference lives as long as `c`.
inline const std::string& CompressionExtension(const Compression& c) { return c.family; }

// Compresses `raw` into one stream. `c` is validated as by ParseCompression
// (a hand-built Compression with a bad family or level is refused).
// snappy refuses inputs of 4 GiB or more (kInvalidArgument). Never throws:
// running out of memory is kIoError "<family>: compressing <n> bytes: out of
// memory (std::bad_alloc)".
Result<std::string> Compress(const Compression& c, std::string_view raw);

// Decompresses a whole file. The output may not exceed `max_output` bytes
// (callers pass raw_data.bytes from the index, which ParseIndex caps by what
// the shard format can hold) so corrupt or hostile input cannot cause an
// unbounded allocation. Neither max_output nor a size a stream's header
// declares is allocated up front: memory grows with the output actually
// produced (at most about twice it), from a start proportional to `data`'s
// size; a snappy block's declared size is allocated only once its tags are
// shown to produce exactly that many bytes. Output shorter than `max_output`
// is not an error here (callers compare with the expected size). `what`
// names the file in errors.
//
// Errors, all kCorrupt and starting with "<what>: ":
//   "<family> data is truncated: ..."      input ends before the stream does
//   "<family> data is corrupt: ..."        the library's reason, and where
//   "<family> data decompresses to more than <max_output> bytes ..."
//   "<n> bytes of trailing data after the <family> stream that ends at
//    offset <k> (...)"                      bytes after the last stream
// except when memory runs out first: kIoError "<what>: <family> data of <n>
// bytes, decompressing to at most <max_output>: out of memory
// (std::bad_alloc)" (see base/exception_status.h). Never throws.
// An unusable `c` gives the ParseCompression error prefixed with `what`.
Result<std::string> Decompress(const Compression& c, std::string_view data,
                               uint64_t max_output, std::string_view what);

// Decompresses as Decompress does, with max_output = `capacity` (same limits
// and errors), into the caller's out[0, capacity), and returns the bytes
// produced (at most `capacity`; bytes past them are left as they were, but
// libzstd may use all of out[0, capacity) as scratch, and so may write into
// it on an error too; snappy writes nothing on an error). For
// callers that reuse one buffer across many streams (Parquet pages): snappy
// decodes straight into `out`, which is never zero-filled first, and so does
// zstd (libzstd's one-shot decoder; its errors are Decompress's); the other
// families decode as Decompress does and are copied into `out`.
Result<uint64_t> DecompressInto(const Compression& c, std::string_view data, char* out,
                                uint64_t capacity, std::string_view what);

// Whether DecompressInto decodes `c`'s data straight into `out` (snappy and
// zstd), rather than decoding it as Decompress does and copying it in: a
// caller holding a string from Decompress needs no copy for the others.
// False for an unusable `c`.
bool DecompressesStraightInto(const Compression& c);

// Decompresses as Decompress does (same limits and errors) but writes the
// output to `fd` (at its current offset; not owned, not closed) in chunks of
// 1 MiB instead of returning it: memory stays at one chunk plus the codec's
// window whatever the output size, so a stream that expands enormously
// costs disk the caller has budgeted (max_output), not memory. snappy,
// whose raw blocks refer back anywhere in their output, decodes in memory
// first (its size is checked against max_output before anything is
// allocated). Returns the bytes written. A failed write is kIoError naming
// `path` (which is used for nothing else). On error the file holds a prefix
// of the output: the caller discards it. The writes go through `env`.
Result<uint64_t> DecompressToFile(const Compression& c, std::string_view data,
                                  uint64_t max_output, int fd, std::string_view path,
                                  std::string_view what, Env* env = Env::Default());

}  // namespace sluice

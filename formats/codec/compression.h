// Whole-file compression as Mosaic names it: "zstd", "zstd:19", "br", "br:5",
// "gz", "gz:6", "bz2", "bz2:1", "snappy". One compressed stream per file.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct Compression {
  std::string family;        // "zstd", "br", "gz", "bz2", "snappy"
  std::optional<int> level;  // unset = the family's default (Mosaic's)
  std::string name;          // as given, e.g. "zstd:19" (goes into index.json)
};

// Parses and validates a name (levels: br 0-11, bz2 1-9, gz 0-9, zstd 1-22,
// snappy none). Unknown family or bad level -> kInvalidArgument/kUnimplemented.
Result<Compression> ParseCompression(std::string_view name);

// File extension appended to compressed shard names: the family.
inline const std::string& CompressionExtension(const Compression& c) { return c.family; }

Result<std::string> Compress(const Compression& c, std::string_view raw);

// Decompresses a whole file. The output may not exceed `max_output` bytes
// (callers pass raw_data.bytes from the index) so corrupt input cannot cause
// an unbounded allocation; `what` names the file in errors.
Result<std::string> Decompress(const Compression& c, std::string_view data,
                               uint64_t max_output, std::string_view what);

}  // namespace sluice

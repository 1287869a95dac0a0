// The Content-Range header of a 206 answer. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sluice {

struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  std::optional<uint64_t> total;  // nullopt for "*"
};

// "bytes 0-99/1000" -> {0, 99, 1000}. nullopt for another unit, a range
// whose last byte is before its first, or a total not past the last byte.
std::optional<ContentRange> ParseContentRange(std::string_view value);

}  // namespace sluice

// Byte sizes as Mosaic's bytes_to_int accepts them (cache_limit).
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sluice {

// "123", "123b", or a number (fractions allowed) with suffix kb/mb/gb/tb/pb/eb
// (powers of 1024, as Mosaic's bytes_to_int), case-insensitive, surrounding
// spaces ignored: "100gb" -> 107374182400, "1.5kb" -> 1536 (truncated toward
// zero). Anything else, negatives and values past 2^63 -> kInvalidArgument
// ("ValueError: Unsupported value/suffix ...").
Result<uint64_t> ParseByteSize(std::string_view text);

}  // namespace sluice

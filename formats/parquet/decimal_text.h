// A Parquet DECIMAL's value as text, exactly as Python's str(Decimal) writes
// it ("123.45", "-0.001", "0E-10"): the form the fixtures, `sluice cat` and
// the decimal fields of a dataset use. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::parquet {

// `big_endian`: the unscaled value as big-endian two's complement (the
// BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY form; an INT32/INT64 decimal is given
// as its 4/8 bytes big-endian). Empty input is zero.
std::string DecimalText(std::string_view big_endian, int32_t scale);

// The 4 or 8 bytes of an INT32/INT64 decimal's unscaled value, big-endian.
std::string BigEndianOf(uint64_t value, int bytes);

}  // namespace sluice::parquet

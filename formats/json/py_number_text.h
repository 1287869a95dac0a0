// Python's int(text) and float(text) for ASCII text: CSV/TSV/XSV fields and
// MDS str_float / str_int fields; the one parser of that text. Pure
// functions; thread-safe.
//
// Accepted, as Python accepts it: surrounding ASCII whitespace, an optional
// sign, single underscores between digits; for floats also "1.", ".5",
// exponents, and inf / infinity / nan in any case. Not accepted: non-ASCII
// digits and whitespace (Python takes them; Mosaic's writers never produce
// them), and integers of more than kPyIntMaxStrDigits digits (CPython's
// default limit, which Mosaic's own reads and writes hit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// CPython 3.11's default limit on int <-> decimal text conversions
// (sys.int_info.default_max_str_digits): digits counted without sign or
// underscores, leading zeros included.
inline constexpr size_t kPyIntMaxStrDigits = 4300;

// The value, or nullopt when `text` is not an int64 as Python's int() reads it.
std::optional<int64_t> ParsePyIntText(std::string_view text);

// Python's int(text) of any size, as its canonical decimal text (str() of
// the int: "-" for negatives, no leading zeros, "0" for zero), or nullopt
// when `text` is not an int or has more than kPyIntMaxStrDigits digits.
// CSV/TSV `int` cells beyond int64 are read through this.
std::optional<std::string> ParsePyIntDigits(std::string_view text);

// The value, or nullopt when `text` is not a float as Python's float() reads
// it. Correctly rounded; "-nan" gives a NaN with the sign bit set, as CPython.
std::optional<double> ParsePyFloatText(std::string_view text);

}  // namespace sluice

// Python's int(text) and float(text) for ASCII text: CSV/TSV/XSV fields and
// MDS str_float / str_int fields; the one parser of that text. Pure
// functions; thread-safe.
//
// Accepted, as Python accepts it: surrounding ASCII whitespace, an optional
// sign, single underscores between digits; for floats also "1.", ".5",
// exponents, and inf / infinity / nan in any case. Not accepted: non-ASCII
// digits and whitespace (Python takes them; Mosaic's writers never produce
// them), and integers outside int64 (Python has big ints; Sluice's int is
// int64, like MDS's `int`).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sluice {

// The value, or nullopt when `text` is not an int64 as Python's int() reads it.
std::optional<int64_t> ParsePyIntText(std::string_view text);

// The value, or nullopt when `text` is not a float as Python's float() reads
// it. Correctly rounded; "-nan" gives a NaN with the sign bit set, as CPython.
std::optional<double> ParsePyFloatText(std::string_view text);

}  // namespace sluice

// IEEE 754 binary16 conversions as numpy does them. Pure; thread-safe.
#pragma once

#include <cstdint>

namespace sluice {

// Exact widening (subnormals, ±inf, NaN with its sign all preserved).
double HalfToDouble(uint16_t half);

// numpy's float64 -> float16 cast: round to nearest, ties to even; values
// that round past 65504 become ±inf; NaN stays NaN (top payload bits kept,
// never turned into inf).
uint16_t DoubleToHalf(double value);

}  // namespace sluice

#include "formats/mds/float16.h"

#include <cmath>
#include <cstring>

namespace sluice {

double HalfToDouble(uint16_t half) {
  const bool negative = (half & 0x8000) != 0;
  const unsigned exp = (half >> 10) & 0x1f;
  const unsigned mant = half & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else if (exp == 31) {
    v = mant == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(static_cast<double>(1024 + mant), static_cast<int>(exp) - 25);
  }
  return negative ? -v : v;
}

namespace {

// Shifts `m` right by `shift` (1..63) rounding to nearest, ties to even.
uint64_t ShiftRoundEven(uint64_t m, unsigned shift) {
  const uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

}  // namespace

uint16_t DoubleToHalf(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000);
  const unsigned exp = static_cast<unsigned>((bits >> 52) & 0x7ff);
  const uint64_t mant = bits & ((uint64_t{1} << 52) - 1);
  if (exp == 0x7ff) {
    if (mant == 0) return sign | 0x7c00;
    uint16_t payload = static_cast<uint16_t>(mant >> 42);
    if (payload == 0) payload = 1;  // keep it a NaN
    return sign | 0x7c00 | payload;
  }
  if (exp == 0) return sign;  // double subnormals are far below half's range
  const int e = static_cast<int>(exp) - 1023;
  const uint64_t m = (uint64_t{1} << 52) | mant;  // value = m * 2^(e-52)
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    // Normal half: 10 mantissa bits; a rounding carry ripples into the
    // exponent, and from 0x7bff into 0x7c00 = inf, as IEEE intends.
    const uint64_t q = ShiftRoundEven(m, 42);  // in [1024, 2048]
    return static_cast<uint16_t>(sign + ((static_cast<uint64_t>(e + 15) << 10) + q - 1024));
  }
  // Subnormal half: value in units of 2^-24.
  const unsigned shift = static_cast<unsigned>(28 - e);  // >= 43
  if (shift > 53) return sign;  // < half a unit: rounds to zero
  return static_cast<uint16_t>(sign | ShiftRoundEven(m, shift));
}

}  // namespace sluice

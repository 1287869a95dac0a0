#include "formats/mds/float16.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice {
namespace {

// Values and numpy 1.24's np.float16(value).view(np.uint16).
TEST(Float16, DoubleToHalfMatchesNumpy) {
  struct Case {
    double value;
    uint16_t half;
  };
  const Case cases[] = {
      {0x0.0p+0, 0x0000},
      {-0x0.0p+0, 0x8000},
      {0x1.0000000000000p+0, 0x3c00},
      {-0x1.0000000000000p+0, 0xbc00},
      {0x1.0000000000000p-1, 0x3800},
      {0x1.ffc0000000000p+15, 0x7bff},   // 65504, the largest half
      {0x1.ffde000000000p+15, 0x7bff},   // 65519
      {0x1.ffdffae147ae1p+15, 0x7bff},   // 65519.99
      {0x1.ffe0000000000p+15, 0x7c00},   // 65520 rounds to inf
      {0x1.1170000000000p+16, 0x7c00},   // 70000
      {-0x1.1170000000000p+16, 0xfc00},
      {0x1.7e43c8800759cp+996, 0x7c00},  // 1e300
      {0x1.0020000000000p+11, 0x6800},   // 2049: tie to even (down)
      {0x1.0060000000000p+11, 0x6802},   // 2051: tie to even (up)
      {0x1.0040000000000p+11, 0x6801},
      {0x1.0000000000000p-24, 0x0001},   // smallest subnormal
      {0x1.0000000000000p-25, 0x0000},   // half of it: tie to even 0
      {0x1.000001ad7f29bp-25, 0x0001},
      {0x1.8000000000000p-24, 0x0002},   // 1.5 units: tie to even 2
      {0x1.0000000000000p-14, 0x0400},   // smallest normal
      {0x1.ffc0000000000p-15, 0x0400},   // carries from subnormal to normal
      {0x1.ffe0000000000p-15, 0x0400},
      {0x0.0000000000001p-1022, 0x0000}, // double subnormal
      {0x1.5798ee2308c3ap-27, 0x0000},
      {0x1.01b2b29a4692bp-24, 0x0001},
      {0x1.999999999999ap-4, 0x2e66},
      {0x1.5555555555555p-2, 0x3555},
      {0x1.921f9f01b866ep+1, 0x4248},
      {0x1.6d601ad376ab9p-150, 0x0000},
      {-0x1.8000000000000p-25, 0x8001},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {0x1.ffc0000000000p+9, 0x63ff},
      {0x1.0020000000000p+10, 0x6400},
      {0x1.8000000000000p-14, 0x0600},
      {0x1.0020000000000p+12, 0x6c00},
      {0x1.0060000000000p+12, 0x6c02},
      {0x1.ffffff2e48e8ap+11, 0x6c00},
      {0x1.99999999a999ap-4, 0x2e66},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DoubleToHalf(c.value), c.half) << std::hexfloat << c.value;
  }
  EXPECT_EQ(DoubleToHalf(NAN), 0x7e00);
  EXPECT_EQ(DoubleToHalf(-NAN), 0xfe00);
}

TEST(Float16, WideningIsExact) {
  EXPECT_EQ(HalfToDouble(0x0001), 0x1p-24);
  EXPECT_EQ(HalfToDouble(0x03ff), 0x3ffp-24);
  EXPECT_EQ(HalfToDouble(0x0400), 0x1p-14);
  EXPECT_EQ(HalfToDouble(0x7bff), 65504.0);
  EXPECT_EQ(HalfToDouble(0xe107), -643.5);
  EXPECT_EQ(HalfToDouble(0x7c00), INFINITY);
  EXPECT_EQ(HalfToDouble(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(HalfToDouble(0x7e00)));
  EXPECT_TRUE(std::isnan(HalfToDouble(0x7c01)));
  EXPECT_TRUE(std::signbit(HalfToDouble(0x8000)));
  EXPECT_EQ(HalfToDouble(0x8000), 0.0);
}

// Every half round-trips, and every midpoint between neighbours rounds to
// the even one while anything off the midpoint rounds to the nearer one:
// this pins round-to-nearest-even over the whole range.
TEST(Float16, ExhaustiveRoundTripAndMidpoints) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const uint16_t a = static_cast<uint16_t>(h | sign);
      const double x = HalfToDouble(a);
      ASSERT_EQ(DoubleToHalf(x), a) << h;
      const uint16_t b = static_cast<uint16_t>((h + 1) | sign);  // 0x7c00 = inf
      // Past 0x7bff the "next" value is 2^16, so the midpoint 65520 goes to inf.
      const double y = h + 1 == 0x7c00 ? (sign ? -65536.0 : 65536.0) : HalfToDouble(b);
      const double mid = (x + y) / 2;  // exact in double
      const uint16_t even = (h & 1) ? b : a;
      ASSERT_EQ(DoubleToHalf(mid), even) << h;
      ASSERT_EQ(DoubleToHalf(std::nextafter(mid, x)), a) << h;
      ASSERT_EQ(DoubleToHalf(std::nextafter(mid, y)), b) << h;
    }
  }
}

}  // namespace
}  // namespace sluice

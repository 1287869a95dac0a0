#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

// Expected strings come from CPython 3.11 repr(); float32 rows are
// float(numpy.float32(x)).
TEST(PyFloatRepr, MatchesCPython) {
  struct Case {
    double v;
    const char* repr;
  };
  const Case cases[] = {
      {0x1.1c37937e08000p+53, "1e+16"},
      {0x1.4f8b588e368f1p-17, "1e-05"},
      {0x1.999999999999ap-4, "0.1"},
      {0x1.b69b4ba630f35p+56, "1.2345678901234568e+17"},
      {0x0.0000000000001p-1022, "5e-324"},
      {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
      {-0x0.0p+0, "-0.0"},
      {0x0.0p+0, "0.0"},
      {0x1.0000000000000p+0, "1.0"},
      {-0x1.8000000000000p+0, "-1.5"},
      {0x1.c6bf526340000p+49, "1000000000000000.0"},
      {0x1.1c37937e07fffp+53, "9999999999999998.0"},
      {0x1.a36e2eb1c432dp-14, "0.0001"},
      {0x1.02e4b6ce5dc68p-13, "0.00012345"},
      {0x1.9e3abe16fc70dp-17, "1.2345e-05"},
      {0x1.0000000000000p-1022, "2.2250738585072014e-308"},
      {0x1.0f0cf064dd592p+73, "1e+22"},
      {0x1.249ad2594c37dp+332, "1e+100"},
      {0x1.921fb54442d18p+1, "3.141592653589793"},
      {0x1.9000000000000p+6, "100.0"},
      {0x1.2d68720000000p+20, "1234567.125"},
      {0x1.3333333333333p-2, "0.3"},
      {0x1.0000000000000p+53, "9007199254740992.0"},
      {0x1.0000000000000p+60, "1.152921504606847e+18"},
      {-0x1.56e1fc2f8f359p-997, "-1e-300"},
      {0x1.edd2f1a9fbe77p+6, "123.456"},
      {0x1.52d02c7e14af6p+76, "1e+23"},
      {0x1.1666666666666p+2, "4.35"},
      {0x1.0624dd2f1a9fcp-10, "0.001"},
      {0x1.56a95319d63e1p+63, "1.2345678901234567e+19"},
      {0x1.1eb2d66005835p+997, "1.5e+300"},
      {0x1.99999a0000000p-4, "0.10000000149011612"},     // float32
      {0x1.5555560000000p-2, "0.3333333432674408"},      // float32
      {0x1.fffffe0000000p+127, "3.4028234663852886e+38"},  // float32
      {0x1.0000000000000p-149, "1.401298464324817e-45"},   // float32
      {0x1.0000000000000p+24, "16777216.0"},              // float32
      {0x1.4f8b580000000p-17, "9.999999747378752e-06"},   // float32
      {0x1.ffc0000000000p+15, "65504.0"},                 // float32
  };
  for (const Case& c : cases) EXPECT_EQ(PyFloatRepr(c.v), c.repr) << c.repr;
}

TEST(PyFloatRepr, SpecialValues) {
  EXPECT_EQ(PyFloatRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(PyFloatRepr(std::nan("")), "nan");
  EXPECT_EQ(PyFloatRepr(-std::nan("")), "nan");  // Python drops the sign of NaN
}

}  // namespace
}  // namespace sluice

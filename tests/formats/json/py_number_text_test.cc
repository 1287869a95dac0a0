#include "formats/json/py_number_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace sluice {
namespace {

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Each case was checked against CPython 3.11's int().
TEST(PyNumberTextTest, Int) {
  EXPECT_EQ(ParsePyIntText("0"), 0);
  EXPECT_EQ(ParsePyIntText("-77000231"), -77000231);
  EXPECT_EQ(ParsePyIntText(" 12 "), 12);
  EXPECT_EQ(ParsePyIntText("\t7\n"), 7);
  EXPECT_EQ(ParsePyIntText("+5"), 5);
  EXPECT_EQ(ParsePyIntText("1_000"), 1000);
  EXPECT_EQ(ParsePyIntText("0_1"), 1);
  EXPECT_EQ(ParsePyIntText("007"), 7);
  EXPECT_EQ(ParsePyIntText("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParsePyIntText("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", " ", "-", "+-1", "1__0", "_1", "1_", "1.0", "1e3", "0x10",
                          "12a", "- 1", "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999999"}) {
    EXPECT_EQ(ParsePyIntText(bad), std::nullopt) << bad;
  }
  // Python's digit limit holds for int64 text too (leading zeros count).
  EXPECT_EQ(ParsePyIntText(std::string(4299, '0') + "7"), 7);
  EXPECT_EQ(ParsePyIntText(std::string(4300, '0') + "7"), std::nullopt);
}

// str(int(text)) as CPython 3.11 gives it, any size up to 4300 digits.
TEST(PyNumberTextTest, IntDigits) {
  EXPECT_EQ(ParsePyIntDigits("0"), "0");
  EXPECT_EQ(ParsePyIntDigits("-0"), "0");
  EXPECT_EQ(ParsePyIntDigits(" -000 "), "0");
  EXPECT_EQ(ParsePyIntDigits("+007"), "7");
  EXPECT_EQ(ParsePyIntDigits("-9223372036854775809"), "-9223372036854775809");
  EXPECT_EQ(ParsePyIntDigits(" 1_180_591_620_717_411_303_424\n"), "1180591620717411303424");
  EXPECT_EQ(ParsePyIntDigits(std::string(4300, '9')), std::string(4300, '9'));
  EXPECT_EQ(ParsePyIntDigits("-" + std::string(4300, '9')), "-" + std::string(4300, '9'));
  EXPECT_EQ(ParsePyIntDigits(std::string(4301, '9')), std::nullopt);
  EXPECT_EQ(ParsePyIntDigits("0" + std::string(4300, '9')), std::nullopt);
  for (const char* bad : {"", " ", "-", "+-1", "1__0", "_1", "1_", "1.0", "1e30", "0x10",
                          "12a", "- 1", "true", "\xd9\xa1"}) {
    EXPECT_EQ(ParsePyIntDigits(bad), std::nullopt) << bad;
  }
}

// Each case was checked against CPython 3.11's float().
TEST(PyNumberTextTest, Float) {
  EXPECT_EQ(Bits(*ParsePyFloatText("0.1")), Bits(0.1));
  EXPECT_EQ(Bits(*ParsePyFloatText("-0.0")), Bits(-0.0));
  EXPECT_EQ(Bits(*ParsePyFloatText("1.2857142857142856e-09")), Bits(1.2857142857142856e-09));
  EXPECT_EQ(*ParsePyFloatText("1_0.5"), 10.5);
  EXPECT_EQ(*ParsePyFloatText("1."), 1.0);
  EXPECT_EQ(*ParsePyFloatText(".5"), 0.5);
  EXPECT_EQ(*ParsePyFloatText("1E+0_5"), 1e5);
  EXPECT_EQ(*ParsePyFloatText("1.e3"), 1000.0);
  EXPECT_EQ(*ParsePyFloatText("  2.5\t"), 2.5);
  EXPECT_EQ(*ParsePyFloatText("+7"), 7.0);
  EXPECT_EQ(*ParsePyFloatText("infinity"), INFINITY);
  EXPECT_EQ(*ParsePyFloatText("-iNF"), -INFINITY);
  EXPECT_EQ(*ParsePyFloatText("+inf"), INFINITY);
  EXPECT_TRUE(std::isnan(*ParsePyFloatText("nAn")));
  EXPECT_FALSE(std::signbit(*ParsePyFloatText("nan")));
  EXPECT_TRUE(std::signbit(*ParsePyFloatText("-nan")));
  // Out of range: Python gives inf / 0.0 with the sign.
  EXPECT_EQ(*ParsePyFloatText("1e400"), INFINITY);
  EXPECT_EQ(*ParsePyFloatText("-1e400"), -INFINITY);
  EXPECT_EQ(Bits(*ParsePyFloatText("1e-400")), Bits(0.0));
  EXPECT_EQ(Bits(*ParsePyFloatText("-1e-400")), Bits(-0.0));
  EXPECT_EQ(*ParsePyFloatText("1" + std::string(400, '0') + "e-5"), INFINITY);
  EXPECT_EQ(*ParsePyFloatText("0." + std::string(400, '0') + "1e300"), 1e-101);
  EXPECT_EQ(*ParsePyFloatText("0." + std::string(400, '0') + "1e-300"), 0.0);
  EXPECT_EQ(*ParsePyFloatText("4.9e-324"), 4.9e-324);  // subnormal, in range
  for (const char* bad : {"", " ", ".", "-", "0x10", ".e3", "1_.5", "inf_", "1e", "e5",
                          "Infinityx", "infinit", "nan(1)", "1e+", "1__0", "1 2", "1,5"}) {
    EXPECT_EQ(ParsePyFloatText(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace sluice

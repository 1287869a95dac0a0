#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

using namespace std::string_literals;

std::string Redump(std::string_view text, bool sort_keys) {
  Result<JsonValue> v = ParsePyJson(text);
  if (!v.ok()) return "parse error: " + v.status().ToString();
  Result<std::string> out = DumpPyJson(*v, sort_keys);
  if (!out.ok()) return "dump error: " + out.status().ToString();
  return *out;
}

// Expected text from CPython 3.11 json.dumps(json.loads(text)).
TEST(PyJson, RedumpsLikePython) {
  EXPECT_EQ(Redump(R"([1.0, 1, -0.0, 1e400, -1e400, 1e-400, -1e-400,
                      123456789012345678901234567890, -9223372036854775809,
                      9223372036854775807, NaN, -Infinity, -0])",
                   false),
            "[1.0, 1, -0.0, Infinity, -Infinity, 0.0, -0.0, 123456789012345678901234567890, "
            "-9223372036854775809, 9223372036854775807, NaN, -Infinity, 0]");
  EXPECT_EQ(Redump(" {\"b\":1,\n\"a\":[ ],\t\"c\":{}}\r\n", false), R"({"b": 1, "a": [], "c": {}})");
  EXPECT_EQ(Redump(R"({"b": 1, "a": 2, "b": 3})", false), R"({"b": 3, "a": 2})");
  EXPECT_EQ(Redump(R"(["\u00E9\/", "é", 1E2, 2.5e-3, 0.5])", false),
            R"(["\u00e9/", "\u00e9", 100.0, 0.0025, 0.5])");
  EXPECT_EQ(Redump(R"("\ud83d\ude00 \udc00\ud800 \ud800x")", false),
            R"("\ud83d\ude00 \udc00\ud800 \ud800x")");
  EXPECT_EQ(Redump("\"\xf0\x9f\x98\x80\"", false), R"("\ud83d\ude00")");
}

TEST(PyJson, SortKeysSortsEveryLevelByCodePoint) {
  EXPECT_EQ(Redump("{\"b\":1,\"a\":{\"z\":1,\"y\":[]},\"\xc3\xa9\":0,\"z\":0}", true),
            R"({"a": {"y": [], "z": 1}, "b": 1, "z": 0, "\u00e9": 0})");
  EXPECT_EQ(Redump(R"([{"b": 1, "a": 2}])", true), R"([{"a": 2, "b": 1}])");
}

TEST(PyJson, KeepsIntFloatDistinction) {
  Result<JsonValue> v = ParsePyJson("[1, 1.0, 1e0, 18446744073709551616]");
  ASSERT_TRUE(v.ok());
  const auto& arr = std::get<JsonValue::Array>(v->v);
  ASSERT_EQ(arr.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(arr[0].v), 1);
  EXPECT_EQ(std::get<double>(arr[1].v), 1.0);
  EXPECT_EQ(std::get<double>(arr[2].v), 1.0);
  EXPECT_EQ(std::get<JsonValue::BigInt>(arr[3].v).digits, "18446744073709551616");
}

TEST(PyJson, KeepsNulInStrings) {
  Result<JsonValue> v = ParsePyJson(R"("a\u0000b")");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<std::string>(v->v), "a\0b"s);
}

TEST(PyJson, ParseErrorsGiveOffsets) {
  struct Case {
    std::string in;
    std::string message;
  };
  const Case cases[] = {
      {"", "JSON at byte offset 0: expected a value, got end of input"},
      {"[1, 2", "JSON at byte offset 5: expected ',' or ']', got end of input"},
      {"{\"a\" 1}", "JSON at byte offset 5: expected ':' after a property name"},
      {"{'a': 1}", "JSON at byte offset 1: expected a property name in double quotes"},
      {"[1,]", "JSON at byte offset 3: expected a value"},
      {"01", "JSON at byte offset 1: extra data after the JSON value"},
      {"1.", "JSON at byte offset 1: extra data after the JSON value"},
      {"-NaN", "JSON at byte offset 1: expected a digit"},
      {"\"ab", "JSON at byte offset 3: unterminated string"},
      {"\"a\nb\"", "JSON at byte offset 2: invalid control character in string"},
      {"\"\\x\"", "JSON at byte offset 1: invalid escape"},
      {"\"\\u12G4\"", "JSON at byte offset 3: invalid \\u escape"},
      {"\"\xff\"", "JSON at byte offset 1: invalid UTF-8 byte"},
      {"\"\xed\xa0\x80\"", "JSON at byte offset 1: invalid UTF-8 sequence"},
      {"nul", "JSON at byte offset 0: expected a value"},
      {std::string(1001, '['), "JSON at byte offset 1000: nesting deeper than 1000"},
      {std::string(4301, '7'), "JSON at byte offset 0: integer longer than 4300 digits"},
  };
  for (const Case& c : cases) {
    Result<JsonValue> v = ParsePyJson(c.in);
    ASSERT_FALSE(v.ok()) << c.in;
    EXPECT_EQ(v.status().code(), StatusCode::kCorrupt);
    EXPECT_EQ(v.status().message(), c.message) << c.in.substr(0, 20);
  }
}

TEST(PyJson, DepthLimitAcceptsDeepButBoundedInput) {
  const std::string deep = std::string(999, '[') + std::string(999, ']');
  EXPECT_EQ(Redump(deep, false), deep);
}

TEST(PyJson, DumpRejectsMalformedBigIntAndInvalidUtf8) {
  JsonValue big{JsonValue::BigInt{"12a"}};
  EXPECT_EQ(DumpPyJson(big, false).status().code(), StatusCode::kInvalidArgument);
  JsonValue bad{std::string("\xff")};
  EXPECT_EQ(DumpPyJson(bad, false).status().message(),
            "invalid UTF-8 at byte offset 0: unexpected byte 0xff");
}

}  // namespace
}  // namespace sluice

#include <cmath>
#include <cstring>
#include <random>
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

// Random documents: dump, parse, dump again gives the same text (every
// double bit pattern, every code point incl. lone surrogates, big ints).
class RandomDoc {
 public:
  explicit RandomDoc(uint64_t seed) : rng_(seed) {}

  JsonValue Value(int depth) {
    switch (Pick(depth < 4 ? 9 : 7)) {
      case 0: return JsonValue{nullptr};
      case 1: return JsonValue{Pick(2) == 1};
      case 2: return JsonValue{static_cast<int64_t>(rng_())};
      case 3: {
        std::string digits = Pick(2) ? "-" : "";
        digits += std::to_string(1 + Pick(9));
        for (int i = 0, n = 19 + Pick(40); i < n; ++i) digits += std::to_string(Pick(10));
        return JsonValue{JsonValue::BigInt{digits}};
      }
      case 4: case 5: {
        const uint64_t bits = rng_();
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        return JsonValue{d};
      }
      case 6: return JsonValue{Text()};
      case 7: {
        JsonValue::Array arr;
        for (int i = 0, n = Pick(5); i < n; ++i) arr.push_back(Value(depth + 1));
        return JsonValue{std::move(arr)};
      }
      default: {
        JsonValue::Object obj;
        for (int i = 0, n = Pick(5); i < n; ++i) {
          std::string key = Text();
          bool seen = false;  // a dict has each key once
          for (const auto& kv : obj) seen = seen || kv.first == key;
          if (!seen) obj.emplace_back(std::move(key), Value(depth + 1));
        }
        return JsonValue{std::move(obj)};
      }
    }
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  std::string Text() {
    std::string s;
    for (int i = 0, n = Pick(6); i < n; ++i) {
      uint32_t cp;
      switch (Pick(4)) {
        case 0: cp = static_cast<uint32_t>(Pick(0x80)); break;
        case 1: cp = static_cast<uint32_t>(Pick(0x800)); break;
        case 2: cp = static_cast<uint32_t>(Pick(0x10000)); break;  // incl. surrogates
        default: cp = static_cast<uint32_t>(Pick(0x110000)); break;
      }
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        s.push_back(static_cast<char>(0xc0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
      } else if (cp < 0x10000) {
        s.push_back(static_cast<char>(0xe0 | (cp >> 12)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
      } else {
        s.push_back(static_cast<char>(0xf0 | (cp >> 18)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
        s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
      }
    }
    return s;
  }

  std::mt19937_64 rng_;
};

TEST(PyJson, RandomDocumentsRoundTrip) {
  RandomDoc gen(20240501);
  for (int i = 0; i < 2000; ++i) {
    JsonValue::Array top;
    for (int k = 0; k < 4; ++k) top.push_back(gen.Value(1));
    const JsonValue doc{std::move(top)};
    for (bool sort_keys : {false, true}) {
      Result<std::string> text = DumpPyJson(doc, sort_keys);
      ASSERT_TRUE(text.ok()) << text.status().ToString();
      EXPECT_EQ(Redump(*text, sort_keys), *text);
    }
  }
}

}  // namespace
}  // namespace sluice

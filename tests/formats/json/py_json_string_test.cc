#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

using namespace std::string_literals;

std::string Quote(std::string_view s) {
  std::string out;
  Status st = AppendPyJsonString(out, s);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// Each character that is escaped, at every offset of a 24-byte string of
// plain ones (plain runs are scanned eight bytes at a time): escaped where
// it is, the rest copied. Expected forms are json.dumps'.
TEST(AppendPyJsonString, EscapesACharacterAtAnyOffsetOfAPlainRun) {
  const std::vector<std::pair<std::string, std::string>> escapes = {
      {"\""s, R"(\")"},    {"\\"s, R"(\\)"},      {"\n"s, R"(\n)"},
      {"\x01"s, R"(\u0001)"}, {"\x1f"s, R"(\u001f)"}, {"\x7f"s, R"(\u007f)"},
      {"\0"s, R"(\u0000)"},  {"\xc3\xa9"s, R"(\u00e9)"}, {"\xe2\x98\x83"s, R"(\u2603)"},
  };
  const std::string plain = "~ !#$%&'()*+,-./0123[]^_";  // ' '..'~' but '"' and '\\'
  ASSERT_EQ(plain.size(), 24u);
  for (const auto& [raw, escaped] : escapes) {
    for (size_t at = 0; at <= plain.size(); ++at) {
      const std::string in = plain.substr(0, at) + raw + plain.substr(at);
      EXPECT_EQ(Quote(in), "\"" + plain.substr(0, at) + escaped + plain.substr(at) + "\"")
          << escaped << " at " << at;
    }
  }
  EXPECT_EQ(Quote(plain), "\"" + plain + "\"");
}

// Expected text from CPython 3.11 json.dumps.
TEST(AppendPyJsonString, EscapesLikeJsonDumps) {
  EXPECT_EQ(Quote(""), R"("")");
  EXPECT_EQ(Quote("plain text ~"), R"("plain text ~")");
  EXPECT_EQ(Quote("a\0b"s), R"("a\u0000b")");
  EXPECT_EQ(Quote("\x01\x1f\x7f\xc2\x80"), R"("\u0001\u001f\u007f\u0080")");
  EXPECT_EQ(Quote("\"\\/\b\f\n\r\t"), R"("\"\\/\b\f\n\r\t")");
  EXPECT_EQ(Quote("\xc3\xa9\xe2\x98\x83"), R"("\u00e9\u2603")");           // é☃
  EXPECT_EQ(Quote("\xf0\x9f\x98\x80"), R"("\ud83d\ude00")");               // U+1F600
  EXPECT_EQ(Quote("\xf4\x8f\xbf\xbf"), R"("\udbff\udfff")");               // U+10FFFF
  EXPECT_EQ(Quote("\xed\xa0\x80"), R"("\ud800")");  // a lone surrogate, as Python str holds it
}

TEST(AppendPyJsonString, AppendsToExistingText) {
  std::string out = "prefix:";
  ASSERT_TRUE(AppendPyJsonString(out, "x").ok());
  EXPECT_EQ(out, "prefix:\"x\"");
}

TEST(AppendPyJsonString, RejectsInvalidUtf8WithOffset) {
  struct Case {
    std::string in;
    std::string message;
  };
  const Case cases[] = {
      {"ab\xff", "invalid UTF-8 at byte offset 2: unexpected byte 0xff"},
      {"a\xc3", "invalid UTF-8 at byte offset 1: truncated sequence"},
      {"\xc3(", "invalid UTF-8 at byte offset 1: expected a continuation byte"},
      {"\xc0\x80", "invalid UTF-8 at byte offset 0: unexpected byte 0xc0"},
      {"\xe0\x80\x80", "invalid UTF-8 at byte offset 0: overlong or out-of-range sequence"},
      {"\xf4\x90\x80\x80", "invalid UTF-8 at byte offset 0: overlong or out-of-range sequence"},
  };
  for (const Case& c : cases) {
    std::string out = "keep";
    Status st = AppendPyJsonString(out, c.in);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(st.message(), c.message);
    EXPECT_EQ(out, "keep");  // nothing half-written
  }
}

}  // namespace
}  // namespace sluice

// Checks against bytes Mosaic wrote: every `json` column value of
// all_encodings re-dumps byte for byte, and every float column's stored
// value prints as CPython printed it.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

const JsonValue* Get(const JsonValue& obj, std::string_view key) {
  for (const auto& [k, v] : std::get<JsonValue::Object>(obj.v)) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<JsonValue> ReadExpected(const std::string& dataset) {
  std::ifstream in(std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/" + dataset + "/expected.jsonl");
  std::vector<JsonValue> rows;
  std::string line;
  while (std::getline(in, line)) {
    Result<JsonValue> v = ParsePyJson(line);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    if (v.ok()) rows.push_back(std::move(*v));
  }
  return rows;
}

std::string FieldBytes(const JsonValue& field) {
  std::string bytes;
  EXPECT_TRUE(HexDecode(std::get<std::string>(Get(field, "raw_hex")->v), &bytes));
  return bytes;
}

double HalfToDouble(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::nan("") : INFINITY;
  else v = std::ldexp(mant | 0x400, exp - 25);
  return (h & 0x8000) ? -v : v;
}

TEST(PyJsonCompat, JsonColumnRedumpsByteIdentically) {
  const std::vector<JsonValue> rows = ReadExpected("all_encodings");
  ASSERT_EQ(rows.size(), 240u);
  for (const JsonValue& row : rows) {
    const JsonValue& field = *Get(*Get(row, "fields"), "e_json");
    const std::string bytes = FieldBytes(field);
    Result<JsonValue> v = ParsePyJson(bytes);
    ASSERT_TRUE(v.ok()) << bytes << ": " << v.status().ToString();
    Result<std::string> again = DumpPyJson(*v, /*sort_keys=*/false);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(*again, bytes);
  }
}

TEST(PyJsonCompat, FloatColumnsPrintAsCPython) {
  const std::vector<JsonValue> rows = ReadExpected("all_encodings");
  ASSERT_EQ(rows.size(), 240u);
  int checked = 0;
  for (const JsonValue& row : rows) {
    const JsonValue& fields = *Get(row, "fields");
    for (const char* col : {"c_float16", "c_float32", "c_float64", "d_str_float"}) {
      const JsonValue& field = *Get(fields, col);
      const std::string bytes = FieldBytes(field);
      const std::string& want = std::get<std::string>(Get(field, "value_repr")->v);
      double d = 0;
      if (std::string_view(col) == "c_float16") {
        ASSERT_EQ(bytes.size(), 2u);
        d = HalfToDouble(LoadLE<uint16_t>(bytes.data()));
      } else if (std::string_view(col) == "c_float32") {
        ASSERT_EQ(bytes.size(), 4u);
        float f;
        std::memcpy(&f, bytes.data(), 4);
        d = f;
      } else if (std::string_view(col) == "c_float64") {
        ASSERT_EQ(bytes.size(), 8u);
        std::memcpy(&d, bytes.data(), 8);
      } else {
        // str_float stores repr itself: it must survive a parse + repr.
        EXPECT_EQ(bytes, want);
        if (bytes == "nan") d = std::nan("");
        else if (bytes == "inf") d = INFINITY;
        else if (bytes == "-inf") d = -INFINITY;
        else ASSERT_EQ(std::from_chars(bytes.data(), bytes.data() + bytes.size(), d).ec, std::errc());
      }
      EXPECT_EQ(PyFloatRepr(d), want) << col;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 240);
}

// A JSONL shard line is json.dumps(sample, sort_keys=True) + newline, and
// expected.jsonl holds the value Python parsed from it: dumping that value
// sorted must give the stored line (floats, escapes, non-BMP text).
TEST(PyJsonCompat, JsonlLinesRedumpSorted) {
  int checked = 0;
  for (const char* dataset : {"json_plain", "json_crlf_newline", "json_zstd_hashed"}) {
    SCOPED_TRACE(dataset);
    const std::vector<JsonValue> rows = ReadExpected(dataset);
    ASSERT_EQ(rows.size(), 150u);
    for (const JsonValue& row : rows) {
      std::string line;
      ASSERT_TRUE(HexDecode(std::get<std::string>(Get(row, "line_hex")->v), &line));
      Result<std::string> from_value = DumpPyJson(*Get(row, "value"), /*sort_keys=*/true);
      ASSERT_TRUE(from_value.ok()) << from_value.status().ToString();
      const std::string newline = std::string_view(dataset) == "json_crlf_newline" ? "\r\n" : "\n";
      EXPECT_EQ(*from_value + newline, line);
      Result<JsonValue> parsed = ParsePyJson(line);  // trailing newline is whitespace
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      Result<std::string> again = DumpPyJson(*parsed, /*sort_keys=*/false);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*again + newline, line);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 450);
}

}  // namespace
}  // namespace sluice

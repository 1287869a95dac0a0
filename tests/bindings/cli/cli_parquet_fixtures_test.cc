// sluice cat, inspect and verify on EVERY Parquet fixture (tests/data/parquet,
// each X.expected.json with its Spark part files), as a user runs them:
// - cat FILE ROW for a spread of rows (first, middle, last, and per column
//   its first null, empty list and list holding a null) gives exactly the
//   values the fixture's independent reader (pyarrow or DuckDB) recorded;
// - inspect names the rows, row groups, writer, and each chunk's codec and
//   encodings as the fixture's footer records them;
// - verify passes the file, and fails (exit 1) on a copy whose first page
//   header is damaged, naming that page: row group 0, the first column, at
//   offset 4 (every writer puts the first chunk right after "PAR1").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/common/temp_dir.h"
#include "tests/formats/dataset/parquet_fixture_values.h"

namespace sluice {
namespace {

using testing::CliRun;
using testing::Sluice;
using testing::Slurp;

const std::string kFixtures = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

JsonValue ParseOrNull(const std::string& text) {
  Result<JsonValue> v = ParsePyJson(text);
  EXPECT_TRUE(v.ok()) << text.substr(0, 300);
  return v.ok() ? *v : JsonValue{};
}

std::string Text(const JsonValue* v) { return v == nullptr ? "<missing>" : testing::DumpForTest(*v); }

const JsonValue::Array& Items(const JsonValue& v, std::string_view key) {
  return std::get<JsonValue::Array>(JsonMember(v, key)->v);
}

int64_t Int(const JsonValue& v, std::string_view key) { return std::get<int64_t>(JsonMember(v, key)->v); }

bool IsNull(const JsonValue& v) { return std::holds_alternative<std::nullptr_t>(v.v); }

// First, middle, last; and per column the first row holding a null, an
// empty list, and a list with a null element.
std::vector<size_t> RowsToShow(const JsonValue::Array& columns, size_t rows) {
  std::set<size_t> picked = {0, rows / 2, rows - 1};
  for (const JsonValue& c : columns) {
    const JsonValue::Array& values = Items(c, "values");
    bool null = false, empty = false, null_element = false;
    for (size_t r = 0; r < values.size(); ++r) {
      const auto* list = std::get_if<JsonValue::Array>(&values[r].v);
      const bool has_null_element =
          list != nullptr && std::any_of(list->begin(), list->end(), IsNull);
      const bool take = (!null && IsNull(values[r])) || (!empty && list != nullptr && list->empty()) ||
                        (!null_element && has_null_element);
      null |= IsNull(values[r]);
      empty |= list != nullptr && list->empty();
      null_element |= has_null_element;
      if (take) picked.insert(r);
    }
  }
  return {picked.begin(), picked.end()};
}

// cat's value of one field in the fixtures' form: `value`, `value_repr`
// (floats as repr text), `value_str`, or bytes as {"hex": raw_hex}.
std::string CatValue(const JsonValue& field) {
  for (const char* key : {"value", "value_repr", "value_str"}) {
    if (const JsonValue* v = JsonMember(field, key)) return Text(v);
  }
  if (const JsonValue* error = JsonMember(field, "error")) return "error " + Text(error);
  return "{\"hex\": " + Text(JsonMember(field, "raw_hex")) + "}";
}

// The expected.json of one fixture, relative to kFixtures.
class CliParquetFixture : public ::testing::TestWithParam<std::string> {};

TEST(CliParquetFixtures, EveryFixtureIsCovered) {
  EXPECT_EQ(testing::ParquetFixtureNames().size(), 57u);  // 51 files and 6 Spark part files
}

TEST_P(CliParquetFixture, CatMatchesTheIndependentReader) {
  size_t checked = 0;
  const JsonValue e = ParseOrNull(Slurp(kFixtures + "/" + GetParam()));
  const std::string file = kFixtures + "/" + JsonStringMember(e, "file");
  const JsonValue::Array& columns = Items(e, "columns");
  const size_t rows = static_cast<size_t>(Int(e, "num_rows"));
  ASSERT_GT(rows, 0u);
  for (size_t row : RowsToShow(columns, rows)) {
    CliRun r = Sluice("cat " + file + " " + std::to_string(row));
    ASSERT_EQ(r.exit_code, 0) << "row " << row << ": " << r.out;
    const JsonValue got = ParseOrNull(r.out);
    EXPECT_EQ(Text(JsonMember(got, "sample")), std::to_string(row));
    const JsonValue* fields = JsonMember(got, "fields");
    ASSERT_NE(fields, nullptr) << r.out;
    for (const JsonValue& c : columns) {
      const std::string name = JsonStringMember(c, "name");
      const JsonValue* field = JsonMember(*fields, name);
      ASSERT_NE(field, nullptr) << name;
      EXPECT_EQ(CatValue(*field), Text(&Items(c, "values")[row])) << name << " row " << row;
      ++checked;
    }
  }
  EXPECT_GE(checked, 3 * columns.size());
}

TEST_P(CliParquetFixture, InspectMatchesTheFooter) {
  const JsonValue e = ParseOrNull(Slurp(kFixtures + "/" + GetParam()));
  const std::string path = JsonStringMember(e, "file");
  const std::string base = std::filesystem::path(path).filename().string();
  CliRun r = Sluice("inspect " + kFixtures + "/" + path);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const JsonValue::Array& groups = Items(e, "row_groups");
  EXPECT_NE(r.out.find("samples:     " + std::to_string(Int(e, "num_rows")) + "\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("format:      parquet (1 files)\n"), std::string::npos) << r.out;
  const uint64_t size = std::filesystem::file_size(kFixtures + "/" + path);
  const std::string file_line = "  " + base + ": " + std::to_string(size) +
                                " bytes, " + std::to_string(Int(e, "num_rows")) + " rows, " +
                                std::to_string(groups.size()) + " row groups, created by " +
                                JsonStringMember(e, "created_by") + "\n";
  EXPECT_NE(r.out.find(file_line), std::string::npos) << file_line << r.out;
  // Each row group's line, then a line per chunk: path, codec, encodings.
  size_t at = r.out.find(file_line);
  for (size_t g = 0; g < groups.size() && at != std::string::npos; ++g) {
    const std::string group_line =
        "    row group " + std::to_string(g) + ": " + std::to_string(Int(groups[g], "num_rows")) + " rows, ";
    at = r.out.find(group_line, at);
    ASSERT_NE(at, std::string::npos) << group_line << r.out;
    for (const JsonValue& chunk : Items(groups[g], "columns")) {
      std::string encodings;
      for (const JsonValue& x : Items(chunk, "encodings")) {
        encodings += (encodings.empty() ? "" : ",") + std::get<std::string>(x.v);
      }
      at = r.out.find('\n', at) + 1;
      const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
      std::istringstream words(line);
      std::string chunk_path, codec, chunk_encodings;
      words >> chunk_path >> codec >> chunk_encodings;
      EXPECT_EQ(chunk_path, JsonStringMember(chunk, "path")) << line;
      EXPECT_EQ(codec, JsonStringMember(chunk, "codec")) << line;
      EXPECT_EQ(chunk_encodings, encodings) << line;
    }
  }
}

TEST_P(CliParquetFixture, VerifyPassesItAndFailsOnADamagedCopy) {
  testing::TempDir tmp("sluice_cli_parquet_fixtures");
  const JsonValue e = ParseOrNull(Slurp(kFixtures + "/" + GetParam()));
  const std::string path = kFixtures + "/" + JsonStringMember(e, "file");
  CliRun r = Sluice("verify " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ok: " + std::to_string(Int(e, "num_rows")) + " rows in " +
                       std::to_string(Items(e, "row_groups").size()) + " row group"),
            std::string::npos)
      << r.out;
  // The first page header's first field header becomes 0x1f: field 1 of
  // compact type 15, which Thrift's compact protocol does not have.
  std::string bytes = Slurp(path);
  ASSERT_EQ(bytes.substr(0, 4), "PAR1");
  bytes[4] = '\x1f';
  const std::string base = std::filesystem::path(path).filename().string();
  const std::string damaged = tmp.path() + "/" + base;
  std::ofstream(damaged, std::ios::binary) << bytes;
  r = Sluice("verify " + damaged);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const std::string first_column = JsonStringMember(Items(Items(e, "row_groups")[0], "columns")[0], "path");
  const std::string where = "FAIL shard 0 (" + base + "): corrupt: " + base + ": row group 0 column \"" +
                            first_column + "\": page at offset 4: ";
  EXPECT_NE(r.out.find(where), std::string::npos) << where << "\n" << r.out;
  EXPECT_NE(r.out.find("FAILED: 1 of "), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Parquet, CliParquetFixture, ::testing::ValuesIn(testing::ParquetFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return testing::ParquetFixtureTestName(i.param);
                         });

}  // namespace
}  // namespace sluice

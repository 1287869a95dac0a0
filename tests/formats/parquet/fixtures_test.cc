// Every fixture in tests/data/parquet (files written by pyarrow 12 and 26,
// DuckDB, Polars and Spark, with values read back by pyarrow) through the
// footer, the page reader and the column-chunk decoder: the footer's
// description and every value of every row must equal <name>.expected.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/page_reader.h"
#include "formats/parquet/row_group_reader.h"
#include "tests/formats/parquet/value_json.h"

namespace sluice::parquet {
namespace {

const std::string kFixturesDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

// Fixtures with values, as paths of their expected.json under kFixturesDir (the
// bad_* ones describe an error instead; Spark's folders hold part files
// whose expected.json names the file).
std::vector<std::string> FixtureNames() {
  std::vector<std::string> names;
  const std::string suffix = ".expected.json";
  for (const auto& e : std::filesystem::recursive_directory_iterator(kFixturesDir)) {
    const std::string rel = std::filesystem::relative(e.path(), kFixturesDir).string();
    if (rel.ends_with(suffix) && !rel.starts_with("bad_")) names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string TestName(const std::string& rel) {
  std::string n = rel.substr(0, rel.size() - std::string(".expected.json").size());
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

std::string Dump(const JsonValue& v) {
  Result<std::string> s = DumpPyJson(v, false);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

RangeReader Reader(const std::string& bytes, int* reads) {
  return [&bytes, reads](uint64_t offset, uint64_t size, std::string* out) {
    ++*reads;
    out->assign(bytes, offset, size);
    return Status::Ok();
  };
}

class Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Fixture, FooterAndEveryValueMatchPyarrow) {
  const std::filesystem::path json = std::filesystem::path(kFixturesDir) / GetParam();
  Result<std::string> text = ReadFile(json.string());
  ASSERT_TRUE(text.ok());
  Result<JsonValue> expected = ParsePyJson(*text);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  const JsonValue& e = *expected;
  const std::string name = JsonStringMember(e, "file");
  Result<std::string> bytes = ReadFile(kFixturesDir + "/" + name);  // "file" is relative to kFixturesDir
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  int reads = 0;
  Result<FileFooter> footer = ReadFooter(bytes->size(), Reader(*bytes, &reads), name);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  EXPECT_LE(reads, 3);
  EXPECT_EQ(footer->meta.num_rows, std::get<int64_t>(JsonMember(e, "num_rows")->v));
  EXPECT_EQ(footer->meta.created_by.value_or(""), JsonStringMember(e, "created_by"));

  const auto& groups = std::get<JsonValue::Array>(JsonMember(e, "row_groups")->v);
  ASSERT_EQ(footer->meta.row_groups.size(), groups.size());
  for (size_t rg = 0; rg < groups.size(); ++rg) {
    EXPECT_EQ(footer->meta.row_groups[rg].num_rows, std::get<int64_t>(JsonMember(groups[rg], "num_rows")->v));
    const auto& cols = std::get<JsonValue::Array>(JsonMember(groups[rg], "columns")->v);
    ASSERT_EQ(cols.size(), footer->schema.leaves.size());
    for (size_t c = 0; c < cols.size(); ++c) {
      const ColumnMetaData& m = footer->chunk(rg, c);
      EXPECT_EQ(footer->schema.leaves[c].path, JsonStringMember(cols[c], "path"));
      EXPECT_EQ(CompressionCodecName(m.codec), JsonStringMember(cols[c], "codec"));
      std::vector<std::string> encodings;
      for (Encoding x : m.encodings) encodings.push_back(EncodingName(x));
      std::vector<std::string> want;
      for (const JsonValue& x : std::get<JsonValue::Array>(JsonMember(cols[c], "encodings")->v)) {
        want.push_back(std::get<std::string>(x.v));
      }
      // The fixtures list them in pyarrow's order, not the file's.
      std::sort(encodings.begin(), encodings.end());
      std::sort(want.begin(), want.end());
      EXPECT_EQ(encodings, want) << footer->schema.leaves[c].path;
      // Page versions and CRCs, from the pages themselves.
      const ByteRange r = footer->chunk_ranges[rg][c];
      PageReader pages(std::string_view(*bytes).substr(r.offset, r.size), r.offset, m.codec, name);
      Page page;
      int64_t data_pages = 0;
      bool all_crc = true;
      int version = 0;
      while (true) {
        Result<bool> more = pages.Next(&page);
        ASSERT_TRUE(more.ok()) << more.status().ToString();
        if (!*more) break;
        all_crc = all_crc && page.header.crc.has_value();
        if (page.header.type == PageType::kDictionaryPage) continue;
        ++data_pages;
        version = page.header.type == PageType::kDataPageV2 ? 2 : 1;
      }
      if (const JsonValue* v = JsonMember(cols[c], "data_page_version")) {
        EXPECT_EQ(version, std::get<int64_t>(v->v)) << footer->schema.leaves[c].path;
      }
      if (const JsonValue* v = JsonMember(cols[c], "data_pages")) {
        EXPECT_EQ(data_pages, std::get<int64_t>(v->v)) << footer->schema.leaves[c].path;
      }
      if (const JsonValue* v = JsonMember(cols[c], "page_crc")) {
        EXPECT_EQ(all_crc, std::get<bool>(v->v)) << footer->schema.leaves[c].path;
      }
    }
  }

  const auto& columns = std::get<JsonValue::Array>(JsonMember(e, "columns")->v);
  ASSERT_EQ(columns.size(), footer->schema.fields.size());
  for (size_t f = 0; f < columns.size(); ++f) {
    EXPECT_EQ(footer->schema.fields[f].name, JsonStringMember(columns[f], "name"));
  }
  std::vector<size_t> next_row(columns.size(), 0);
  for (size_t rg = 0; rg < footer->meta.row_groups.size(); ++rg) {
    reads = 0;
    Result<std::vector<ColumnBuffer>> buffers =
        ReadRowGroup(*footer, rg, {}, Reader(*bytes, &reads), name);
    ASSERT_TRUE(buffers.ok()) << buffers.status().ToString();
    EXPECT_EQ(reads, 1);  // the row group's chunks are adjacent: one read
    for (size_t f = 0; f < columns.size(); ++f) {
      const auto& values = std::get<JsonValue::Array>(JsonMember(columns[f], "values")->v);
      const ColumnBuffer& b = (*buffers)[f];
      int mismatches = 0;
      for (size_t row = 0; row < b.num_rows && mismatches < 3; ++row) {
        const size_t at = next_row[f] + row;
        ASSERT_LT(at, values.size());
        Result<JsonValue> got = testing::RowAsJson(b, row);
        ASSERT_TRUE(got.ok());
        const std::string g = Dump(*got), w = Dump(values[at]);
        if (g != w) {
          ++mismatches;
          ADD_FAILURE() << name << " column " << footer->schema.fields[f].name << " row " << at
                        << ": got " << g.substr(0, 300) << ", expected " << w.substr(0, 300);
        }
      }
      next_row[f] += b.num_rows;
    }
  }
  for (size_t f = 0; f < columns.size(); ++f) {
    EXPECT_EQ(next_row[f], std::get<JsonValue::Array>(JsonMember(columns[f], "values")->v).size());
  }
}

INSTANTIATE_TEST_SUITE_P(Parquet, Fixture, ::testing::ValuesIn(FixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return TestName(i.param); });

}  // namespace
}  // namespace sluice::parquet

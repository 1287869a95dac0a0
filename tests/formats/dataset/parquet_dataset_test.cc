// Parquet files as datasets (format "parquet"): every fixture in
// tests/data/parquet opened through DatasetReader (the index from its
// footer, a shard per row group, ShardView over ParquetShardReader) gives
// every value of every row as its expected.json says, with the column
// encodings of formats/parquet/field_encoding.h; folders in the canonical
// order; nulls with a null pointer; bad files with errors naming them.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/sample_json.h"
#include "formats/json/py_json.h"
#include "tests/common/temp_dir.h"
#include "tests/formats/dataset/parquet_fixture_values.h"

namespace sluice {
namespace {

using testing::DumpForTest;
using testing::EncodingOfArrowType;
using testing::ParquetFieldAsExpected;

const std::string kDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

JsonValue ReadJson(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << path;
  Result<JsonValue> v = ParsePyJson(text.ok() ? *text : "null");
  EXPECT_TRUE(v.ok()) << path;
  return v.ok() ? *v : JsonValue{};
}

const JsonValue::Array& ArrayMember(const JsonValue& v, std::string_view key) {
  return std::get<JsonValue::Array>(JsonMember(v, key)->v);
}

bool HoldsNullElement(const JsonValue& v) {
  const auto* a = std::get_if<JsonValue::Array>(&v.v);
  if (a == nullptr) return false;
  for (const JsonValue& x : *a) {
    if (std::holds_alternative<std::nullptr_t>(x.v)) return true;
  }
  return false;
}

// Every row of fixture `rel` through DatasetReader::Read, into fields that
// last until the reader is destroyed or (until_next_read) only until the
// next Read into them: then each row is read twice, after another row, and
// must be its exact values both times. With `pieces`, a value handed out as
// its pieces (SampleFields::pieced) is those pieces laid end to end.
void CheckEveryValue(const std::string& rel, bool until_next_read, bool pieces = false) {
  const JsonValue e = ReadJson(kDir + "/" + rel);
  const std::string file = JsonStringMember(e, "file");
  auto reader = DatasetReader::Open(kDir + "/" + file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  DatasetReader& r = **reader;
  const auto& columns = ArrayMember(e, "columns");
  const auto& groups = ArrayMember(e, "row_groups");
  EXPECT_EQ(r.num_samples(), static_cast<uint64_t>(std::get<int64_t>(JsonMember(e, "num_rows")->v)));
  size_t nonempty_groups = 0;
  for (const JsonValue& g : groups) nonempty_groups += std::get<int64_t>(JsonMember(g, "num_rows")->v) > 0;
  ASSERT_EQ(r.num_shards(), nonempty_groups);
  for (size_t s = 0; s < r.num_shards(); ++s) {
    const ShardEntry& entry = r.index().shards[s];
    EXPECT_EQ(entry.format, "parquet");
    EXPECT_EQ(entry.raw_data.basename, std::filesystem::path(file).filename().string());
    ASSERT_TRUE(entry.row_group.has_value());
  }
  ASSERT_EQ(r.column_names().size(), columns.size());
  std::vector<std::string> encodings;
  for (size_t c = 0; c < columns.size(); ++c) {
    EXPECT_EQ(r.column_names()[c], JsonStringMember(columns[c], "name"));
    EXPECT_EQ(r.column_encodings()[c], EncodingOfArrowType(JsonStringMember(columns[c], "arrow_type")))
        << r.column_names()[c];
  }
  SampleFields f;
  f.until_next_read = until_next_read;
  f.wants_pieces = pieces;
  int mismatches = 0;
  size_t pieced = 0;
  for (uint64_t read = 0; read < r.num_samples() * (until_next_read ? 2 : 1) && mismatches < 5;
       ++read) {
    // The view path: rows 0, n-1, 1, n-2, ..., twice over.
    const uint64_t n = r.num_samples(), k = read % n;
    const uint64_t row = !until_next_read ? read : k % 2 ? n - 1 - k / 2 : k / 2;
    Status s = r.Read(row, &f);
    if (!s.ok()) {
      // Only a packed list holding a null element may refuse a row, and
      // then with the error naming the first such column.
      size_t c = 0;
      while (c < columns.size() &&
             !(r.column_encodings()[c].starts_with("list<") &&
               HoldsNullElement(ArrayMember(columns[c], "values")[row]))) {
        ++c;
      }
      ASSERT_LT(c, columns.size()) << s.ToString();
      const SampleLocation where = *r.Locate(row);
      EXPECT_EQ(s.ToString(), "unimplemented: " + std::filesystem::path(file).filename().string() +
                                  ": row group " +
                                  std::to_string(*r.index().shards[where.shard].row_group) +
                                  " column \"" + r.column_names()[c] + "\" row " +
                                  std::to_string(where.index_in_shard) +
                                  ": the list holds a null element, which " +
                                  r.column_encodings()[c] + " (packed values) cannot hold");
      continue;
    }
    ASSERT_EQ(f.fields.size(), columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      std::string joined;
      std::string_view field = f.fields[c];
      for (const parquet::PiecedField& p : f.pieced) {
        if (p.field.data() != field.data()) continue;
        for (std::string_view piece : p.pieces) joined += piece;
        ++pieced;
        EXPECT_EQ(joined.size(), field.size());
        field = joined;
      }
      Result<JsonValue> got = ParquetFieldAsExpected(r.column_encodings()[c], field);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      const std::string g = DumpForTest(*got);
      const std::string w = DumpForTest(ArrayMember(columns[c], "values")[row]);
      if (g != w) {
        ++mismatches;
        ADD_FAILURE() << file << " column " << r.column_names()[c] << " row " << row << ": got "
                      << g.substr(0, 300) << ", expected " << w.substr(0, 300);
      }
    }
  }
  // hf_image's JPEGs straddle snappy literals: the pieces path hands them
  // out so (other fixtures' values may all lie in one literal).
  if (pieces && rel.starts_with("hf_image")) {
    EXPECT_GT(pieced, 0u);
  }
  if (!pieces) {
    EXPECT_EQ(pieced, 0u);
  }
}

class ParquetFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(ParquetFixture, EveryValueThroughTheDatasetReader) { CheckEveryValue(GetParam(), false); }

TEST_P(ParquetFixture, EveryValueThroughTheViewPath) { CheckEveryValue(GetParam(), true); }

TEST_P(ParquetFixture, EveryValueThroughThePiecesPath) { CheckEveryValue(GetParam(), true, true); }

INSTANTIATE_TEST_SUITE_P(Parquet, ParquetFixture, ::testing::ValuesIn(testing::ParquetFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return testing::ParquetFixtureTestName(i.param);
                         });

TEST(ParquetDataset, IsAFooterIndexedFormatWithoutWriter) {
  const ShardFormatDescriptor* f = FindShardFormat("parquet");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->index_source, IndexSource::kFileFooters);
  EXPECT_EQ(f->entry_schema, nullptr);
  EXPECT_FALSE(f->has_meta());
  EXPECT_EQ(f->fields, FieldForm::kParquetValue);
  EXPECT_EQ(f->open_writer, nullptr);
  EXPECT_EQ(f->head_bytes, nullptr);
  EXPECT_EQ(&ShardFormats().back(), f);
}

// Spark's folder: the part files in bytewise order, _SUCCESS and the .crc
// files left out, the rows of every part one after the other.
TEST(ParquetDataset, SparkFolderInCanonicalOrder) {
  auto reader = DatasetReader::Open(kDir + "/spark_out");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const DatasetReader& r = **reader;
  std::vector<std::string> files;
  uint64_t rows = 0;
  for (const char* part : {"part-00000", "part-00001", "part-00002"}) {
    const JsonValue e = ReadJson(kDir + "/spark_out/" + part + ".expected.json");
    files.push_back(std::filesystem::path(JsonStringMember(e, "file")).filename().string());
    rows += static_cast<uint64_t>(std::get<int64_t>(JsonMember(e, "num_rows")->v));
  }
  std::vector<std::string> got;
  for (const ShardEntry& s : r.index().shards) {
    if (got.empty() || got.back() != s.raw_data.basename) got.push_back(s.raw_data.basename);
  }
  EXPECT_EQ(got, files);
  EXPECT_EQ(r.num_samples(), rows);
  EXPECT_EQ(r.root(), kDir + "/spark_out");
}

// One file of several row groups: a shard per group, ordinals in order.
TEST(ParquetDataset, RowGroupsAreShards) {
  auto reader = DatasetReader::Open(kDir + "/pa26_many_row_groups.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const DatasetReader& r = **reader;
  ASSERT_EQ(r.num_shards(), 9u);
  for (uint32_t i = 0; i < 9; ++i) {
    EXPECT_EQ(r.index().shards[i].row_group, i);
    EXPECT_EQ(r.index().shards[i].samples, i < 8 ? 7u : 4u);
  }
  EXPECT_EQ(r.root(), kDir);
}

// A null has a null pointer; an empty string or list a non-null one.
TEST(ParquetDataset, NullsHaveNullPointersEmptiesDoNot) {
  auto reader = DatasetReader::Open(kDir + "/pa26_lists_v1.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  SampleFields f;
  // Row 1: int_list [], string_list ["xxx..", ""], large_int64_list [1099511627776].
  ASSERT_TRUE((*reader)->Read(1, &f).ok());
  EXPECT_NE(f.fields[1].data(), nullptr);
  EXPECT_EQ(f.fields[1].size(), 0u);
  // Row 3: int_list null.
  ASSERT_TRUE((*reader)->Read(3, &f).ok());
  EXPECT_EQ(f.fields[1].data(), nullptr);
  EXPECT_EQ(f.fields[1].size(), 0u);
  // Row 0: large_int64_list null; nested_int_list [] as JSON text.
  Status s = (*reader)->Read(0, &f);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);  // int_list [null]
}

// `sluice cat`'s JSON for a Parquet row.
TEST(ParquetDataset, SampleJson) {
  auto reader = DatasetReader::Open(kDir + "/pa26_codec_snappy.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  Result<std::string> json = SampleToJson(**reader, 1);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  // Values as pyarrow reads row 1 (pa26_codec_snappy.expected.json).
  EXPECT_EQ(*json,
            "{\"fields\": {\"id\": {\"encoding\": \"int64\", \"raw_hex\": \"0100000000000000\", "
            "\"value\": 1}, \"label\": {\"encoding\": \"str\", \"raw_hex\": \"646f67\", \"value\": "
            "\"dog\"}, \"score\": {\"encoding\": \"float64\", \"raw_hex\": \"0000000000fe60c0\", "
            "\"value_repr\": \"-135.9375\"}, \"text\": {\"encoding\": \"str\", \"raw_hex\": "
            "\"656d6f6a69f09f988020616c7068612020656d6f6a69f09f988020616c706861202067616d6d6120616c706861"
            "20656d6f6a69f09f9880\", \"value\": \"emoji\\ud83d\\ude00 alpha  emoji\\ud83d\\ude00 alpha  "
            "gamma alpha emoji\\ud83d\\ude00\"}, \"tokens\": {\"encoding\": \"list<int32>\", "
            "\"raw_hex\": \"c70a00008c7a0000\", \"value\": [2759, 31372]}}, \"index_in_shard\": 1, "
            "\"sample\": 1, \"shard\": 0}");
}

TEST(ParquetDataset, BadFilesNameTheFile) {
  for (const char* name : {"bad_magic_tail.parquet", "bad_footer_length.parquet"}) {
    auto reader = DatasetReader::Open(kDir + "/" + name);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.status().message().find(name), std::string::npos) << reader.status().ToString();
  }
  auto reader = DatasetReader::Open(kDir + "/bad_page_crc_mismatch_v1.parquet");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  SampleFields f;
  EXPECT_EQ((*reader)->Read(0, &f).ToString(),
            "corrupt: bad_page_crc_mismatch_v1.parquet: row group 0 column \"text\": page at offset "
            "1041: CRC-32 of the page's 30 bytes is 74c083d8, the header says 9f62bd13");
}

// A folder without index.json nor Parquet files keeps the index.json error.
TEST(ParquetDataset, FolderWithoutParquetFiles) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/_SUCCESS", "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/notes.txt", "x").ok());
  auto reader = DatasetReader::Open(dir.path());
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_NE(reader.status().message().find("index.json"), std::string::npos)
      << reader.status().ToString();
}

}  // namespace
}  // namespace sluice

// Every compat dataset written by Mosaic reads back, sample by sample and
// field by field, to exactly what its expected.jsonl records.
#include "formats/dataset/dataset_reader.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "formats/dataset/sample_json.h"
#include "formats/json/py_json.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const JsonValue* Member(const JsonValue& obj, const std::string& key) {
  for (const auto& [k, v] : std::get<JsonValue::Object>(obj.v)) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Erase(JsonValue& obj, const std::string& key) {
  auto& members = std::get<JsonValue::Object>(obj.v);
  std::erase_if(members, [&](const auto& m) { return m.first == key; });
}

// What Sluice does not decode: JPEG/PNG pixels and Python pickles.
void DropUndecoded(JsonValue& field) {
  const JsonValue* enc = Member(field, "encoding");
  std::string e = enc ? std::get<std::string>(enc->v) : "";
  if (e == "jpeg" || e == "png") Erase(field, "image");
  if (e == "pkl") Erase(field, "python_repr");
  for (auto& [k, v] : std::get<JsonValue::Object>(field.v)) {
    if (k != "items") continue;
    for (JsonValue& item : std::get<JsonValue::Array>(v.v)) DropUndecoded(item);
  }
}

std::string Canonical(const JsonValue& v) { return *DumpPyJson(v, /*sort_keys=*/true); }

class CompatDatasetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompatDatasetTest, ReadsExactlyWhatMosaicRecorded) {
  const std::string dir = kMds + GetParam();
  DatasetReaderOptions options;
  options.verify_hashes = true;
  auto reader = DatasetReader::Open(dir, options);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::string> expected = Lines(dir + "/expected.jsonl");
  ASSERT_EQ((*reader)->num_samples(), expected.size());
  for (uint64_t i = 0; i < expected.size(); ++i) {
    auto want = ParsePyJson(expected[i]);
    ASSERT_TRUE(want.ok());
    if (JsonValue* fields = const_cast<JsonValue*>(Member(*want, "fields"))) {
      for (auto& [name, field] : std::get<JsonValue::Object>(fields->v)) DropUndecoded(field);
    }
    auto got_text = SampleToJson(**reader, i);
    ASSERT_TRUE(got_text.ok()) << "sample " << i << ": " << got_text.status().ToString();
    auto got = ParsePyJson(*got_text);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(Canonical(*got), Canonical(*want)) << GetParam() << " sample " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Mosaic, CompatDatasetTest,
    ::testing::Values("all_encodings", "compressed_br", "compressed_br_level5", "compressed_bz2",
                      "compressed_gz", "compressed_snappy", "compressed_zstd",
                      "compressed_zstd_hashed", "compressed_zstd_level19", "csv_bz2", "csv_plain",
                      "fixed_size_only", "hashed_all_algos", "json_crlf_newline", "json_plain",
                      "json_zstd_hashed", "merged", "quirk_oversized_samples",
                      "single_shard_no_limit", "tsv_plain"),
    [](const auto& info) { return info.param; });

TEST(DatasetReaderTest, FieldViewsPerFormat) {
  auto csv = DatasetReader::Open(kMds + "csv_plain");
  ASSERT_TRUE(csv.ok());
  SampleFields f;
  ASSERT_TRUE((*csv)->Read(1, &f).ok());
  ASSERT_EQ(f.fields.size(), 3u);
  EXPECT_EQ(f.fields[0], "1");
  EXPECT_EQ(f.fields[1], "h\xc3\xa9llo1");
  EXPECT_EQ(f.fields[2], "-2.8571428571428568");
  EXPECT_EQ(f.raw, "1,h\xc3\xa9llo1,-2.8571428571428568\n");

  auto json = DatasetReader::Open(kMds + "json_plain");
  ASSERT_TRUE(json.ok());
  ASSERT_TRUE((*json)->Read(1, &f).ok());
  ASSERT_EQ(f.fields.size(), 3u);
  EXPECT_EQ(f.fields[0], "1");
  EXPECT_EQ(f.fields[1], "\"h\\u00e9llo1\"");
  EXPECT_EQ(f.fields[2], "-2.8571428571428568");
}

TEST(DatasetReaderTest, OutOfRangeSample) {
  auto r = DatasetReader::Open(kMds + "single_shard_no_limit");
  ASSERT_TRUE(r.ok());
  SampleFields f;
  Status s = (*r)->Read((*r)->num_samples(), &f);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("past the end"), std::string::npos);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A writable copy of a compat dataset for damaging.
class DamagedDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = dir_owner_.path(); }

  std::string Copy(const std::string& name) {
    std::string to = dir_ + "/" + name;
    EXPECT_EQ(std::system(("cp -r " + kMds + name + " " + to).c_str()), 0);
    return to;
  }

  // The last shard's "payload" column renamed in `dir`'s index.json, so
  // its columns differ from shard 0's.
  static void RenameLastShardsPayloadColumn(const std::string& dir) {
    const std::string index = dir + "/index.json";
    std::ifstream in(index);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t last = text.rfind("\"payload\"");
    ASSERT_NE(last, std::string::npos);
    text.replace(last, 9, "\"payloaz\"");
    std::ofstream(index) << text;
  }

  static Status ReadAll(const std::string& dir, bool verify) {
    DatasetReaderOptions options;
    options.verify_hashes = verify;
    auto r = DatasetReader::Open(dir, options);
    if (!r.ok()) return r.status();
    SampleFields f;
    for (uint64_t i = 0; i < (*r)->num_samples(); ++i) SLUICE_RETURN_IF_ERROR((*r)->Read(i, &f));
    return Status::Ok();
  }

  testing::TempDir dir_owner_{"sluice_damaged"};
  std::string dir_;
};

TEST_F(DamagedDatasetTest, MissingShard) {
  std::string d = Copy("all_encodings");
  ASSERT_EQ(std::remove((d + "/shard.00003.mds").c_str()), 0);
  Status s = ReadAll(d, false);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("shard.00003.mds"), std::string::npos) << s.ToString();
}

TEST_F(DamagedDatasetTest, TruncatedShard) {
  std::string d = Copy("all_encodings");
  ASSERT_EQ(::truncate((d + "/shard.00001.mds").c_str(), 1000), 0);
  Status s = ReadAll(d, false);
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_NE(s.message().find("shard.00001.mds: file has 1000 bytes, index.json says"),
            std::string::npos)
      << s.ToString();
}

TEST_F(DamagedDatasetTest, HashMismatchOnlyWhenVerifying) {
  std::string d = Copy("hashed_all_algos");
  std::string path = d + "/shard.00000.mds";
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, -2, SEEK_END);
  std::fputc('#', f);
  std::fclose(f);
  EXPECT_TRUE(ReadAll(d, false).ok());
  Status s = ReadAll(d, true);
  EXPECT_EQ(s.code(), StatusCode::kHashMismatch);
  EXPECT_NE(s.message().find("shard.00000.mds"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("mismatch: expected"), std::string::npos) << s.ToString();
}

TEST_F(DamagedDatasetTest, CorruptCompressedShard) {
  std::string d = Copy("compressed_zstd");
  std::string path = d + "/shard.00001.mds.zstd";
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 40, SEEK_SET);
  for (int i = 0; i < 16; ++i) std::fputc(0xff, f);
  std::fclose(f);
  Status s = ReadAll(d, false);
  EXPECT_EQ(s.code(), StatusCode::kCorrupt) << s.ToString();
  EXPECT_NE(s.message().find("shard.00001.mds.zstd"), std::string::npos) << s.ToString();
}

TEST_F(DamagedDatasetTest, ShardWithMoreSamplesThanTheIndexSays) {
  std::string d = Copy("single_shard_no_limit");
  std::string index = d + "/index.json";
  std::ifstream in(index);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find("\"samples\": 10");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "\"samples\": 9");
  std::ofstream(index) << text;
  Status s = ReadAll(d, false);
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_NE(s.message().find("holds 10 samples, index.json says 9"), std::string::npos)
      << s.ToString();
}

TEST_F(DamagedDatasetTest, ColumnsDifferBetweenShards) {
  std::string d = Copy("merged");
  ASSERT_NO_FATAL_FAILURE(RenameLastShardsPayloadColumn(d));
  auto r = DatasetReader::Open(d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(r.status().message().find("differ from shard 0's"), std::string::npos)
      << r.status().ToString();
}

// OpenDatasetTable (sluice inspect's open: the index as a ShardTable) checks
// what DatasetReader::Open checks, with the same error, and gives the same
// columns and sample count on every index.json fixture.
TEST_F(DamagedDatasetTest, TableOpenChecksAsTheReaderDoes) {
  std::string d = Copy("merged");
  ASSERT_NO_FATAL_FAILURE(RenameLastShardsPayloadColumn(d));
  auto reader = DatasetReader::Open(d);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(OpenDatasetTable(d).status().ToString(), reader.status().ToString());

  for (const char* name : {"all_encodings", "merged", "json_plain", "csv_plain", "tsv_plain",
                           "compressed_zstd_hashed", "hashed_all_algos", "fixed_size_only"}) {
    SCOPED_TRACE(name);
    auto r = DatasetReader::Open(kMds + name);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto t = OpenDatasetTable(kMds + name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->table.size(), (*r)->num_shards());
    EXPECT_EQ(t->num_samples, (*r)->num_samples());
    EXPECT_EQ(t->column_names, (*r)->column_names());
    EXPECT_EQ(t->column_encodings, (*r)->column_encodings());
  }
}

// A typo or a damaged index.json: an encoding that is neither built in nor
// registered by the caller fails the open, naming the index, shard, column
// and name; registered, its fields are handed out as stored.
TEST_F(DamagedDatasetTest, UnregisteredEncodingFailsAtOpen) {
  std::string d = Copy("single_shard_no_limit");
  std::string index = d + "/index.json";
  std::ifstream in(index);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find("[\"int\", \"str\"]");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "[\"int\", \"jpge\"]");
  std::ofstream(index) << text;
  auto refused = DatasetReader::Open(d);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().ToString(),
            "unimplemented: " + index +
                ": shard 0: column 'y' has encoding 'jpge', which is neither built in nor "
                "registered");
  DatasetReaderOptions other;
  other.custom_encodings.names = {"jpeg2"};
  EXPECT_EQ(DatasetReader::Open(d, other).status().code(), StatusCode::kUnimplemented);

  DatasetReaderOptions registered;
  registered.custom_encodings.names = {"jpge"};
  auto r = DatasetReader::Open(d, registered);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->column_encodings(), (std::vector<std::string>{"int", "jpge"}));
  auto original = DatasetReader::Open(kMds + "single_shard_no_limit");
  ASSERT_TRUE(original.ok()) << original.status().ToString();
  SampleFields got, want;
  for (uint64_t i = 0; i < (*r)->num_samples(); ++i) {
    ASSERT_TRUE((*r)->Read(i, &got).ok());
    ASSERT_TRUE((*original)->Read(i, &want).ok());
    EXPECT_EQ(got.fields, want.fields) << i;  // the str field's bytes, as stored
  }
  EXPECT_EQ((*r)->num_samples(), 10u);
}

}  // namespace
}  // namespace sluice

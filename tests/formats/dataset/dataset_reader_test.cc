// Every compat dataset written by Mosaic reads back, sample by sample and
// field by field, to exactly what its expected.jsonl records.
#include "formats/dataset/dataset_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "formats/dataset/sample_json.h"
#include "formats/json/py_json.h"

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

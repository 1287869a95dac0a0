// Every index.json Mosaic wrote parses and re-serializes byte for byte, and
// the config embedded in each uncompressed shard / meta file is exactly
// SerializeShardConfig of its entry.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/index/index.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds";

std::vector<std::string> AllIndexFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kMds)) {
    if (e.is_regular_file() && e.path().filename() == "index.json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Read(const std::string& path) {
  Result<std::string> r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

TEST(IndexCompat, FindsAllIndexFiles) { EXPECT_EQ(AllIndexFiles().size(), 23u); }

TEST(IndexCompat, ReserializesByteIdentically) {
  for (const std::string& path : AllIndexFiles()) {
    SCOPED_TRACE(path);
    const std::string text = Read(path);
    Result<Index> index = ParseIndex(text, path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_FALSE(index->shards.empty());
    const bool merged = path == kMds + "/merged/index.json";
    Result<std::string> out = merged ? SerializeIndexMerged(*index) : SerializeIndexSorted(*index);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, text);
  }
}

TEST(IndexCompat, ParsesFieldsOfEachFormat) {
  Result<Index> mds = ParseIndex(Read(kMds + "/merged/index.json"), "merged/index.json");
  ASSERT_TRUE(mds.ok()) << mds.status().ToString();
  const ShardEntry& m = mds->shards[2];
  EXPECT_EQ(m.format, "mds");
  EXPECT_EQ(m.column_names, (std::vector<std::string>{"id", "part", "payload"}));
  EXPECT_EQ(m.column_encodings, (std::vector<std::string>{"int", "str", "bytes"}));
  EXPECT_EQ(m.column_sizes, (std::vector<std::optional<uint64_t>>{8, std::nullopt, std::nullopt}));
  EXPECT_EQ(m.compression, "zstd");
  EXPECT_EQ(m.size_limit, 1024u);
  EXPECT_EQ(m.samples, 26u);
  EXPECT_EQ(m.raw_data.basename, "part2/shard.00000.mds");
  EXPECT_EQ(m.raw_data.bytes, 1023u);
  ASSERT_TRUE(m.zip_data.has_value());
  EXPECT_EQ(m.zip_data->basename, "part2/shard.00000.mds.zstd");
  EXPECT_EQ(m.zip_data->bytes, 440u);
  EXPECT_FALSE(m.has_meta);

  Result<Index> json = ParseIndex(Read(kMds + "/json_zstd_hashed/index.json"), "json");
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  const ShardEntry& j = json->shards[0];
  EXPECT_EQ(j.format, "json");
  EXPECT_EQ(j.columns, (std::vector<std::pair<std::string, std::string>>{
                           {"id", "int"}, {"name", "str"}, {"score", "float"}}));
  EXPECT_EQ(j.column_names, (std::vector<std::string>{"id", "name", "score"}));
  EXPECT_EQ(j.hashes, (std::vector<std::string>{"sha256", "xxh64"}));
  EXPECT_EQ(j.newline, "\n");
  EXPECT_TRUE(j.has_meta);
  ASSERT_TRUE(j.raw_meta.has_value());
  EXPECT_EQ(j.raw_meta->basename, "shard.00000.json.meta");
  EXPECT_EQ(j.raw_meta->hashes.at("xxh64"), "9f40a9d3ac288a1c");
  ASSERT_TRUE(j.zip_meta.has_value());
  EXPECT_EQ(j.zip_meta->bytes, 257u);

  Result<Index> csv = ParseIndex(Read(kMds + "/csv_plain/index.json"), "csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  const ShardEntry& c = csv->shards[0];
  EXPECT_EQ(c.format, "csv");
  EXPECT_EQ(c.column_encodings, (std::vector<std::string>{"int", "str", "float"}));
  EXPECT_TRUE(c.column_sizes.empty());
  EXPECT_FALSE(c.separator.has_value());
  EXPECT_FALSE(c.zip_meta.has_value());
  EXPECT_EQ(c.samples, 59u);
}

TEST(IndexCompat, EmbeddedConfigsMatch) {
  int checked = 0;
  for (const std::string& path : AllIndexFiles()) {
    SCOPED_TRACE(path);
    Result<Index> index = ParseIndex(Read(path), path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    const std::string dir = fs::path(path).parent_path().string();
    for (const ShardEntry& entry : index->shards) {
      if (entry.compression) continue;  // only the compressed file exists
      const bool mds = entry.format == "mds";
      const std::string file = JoinPath(dir, mds ? entry.raw_data.basename : entry.raw_meta->basename);
      const std::string bytes = Read(file);
      ASSERT_GE(bytes.size(), 8u) << file;
      const uint32_t n = LoadLE<uint32_t>(bytes.data());
      ASSERT_EQ(n, entry.samples) << file;
      const size_t start = 4 + 4 * (size_t{n} + 1);
      ASSERT_LE(start, bytes.size()) << file;
      const size_t end = mds ? LoadLE<uint32_t>(bytes.data() + 4) : bytes.size();
      ASSERT_LE(start, end) << file;
      Result<std::string> config = SerializeShardConfig(entry);
      ASSERT_TRUE(config.ok()) << config.status().ToString();
      EXPECT_EQ(*config, bytes.substr(start, end - start)) << file;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

// Mosaic's XSVWriter (custom separator) stores `separator` in its config;
// none of the compat datasets uses it, so the expected text below comes from
// json.dumps(config, sort_keys=True) in CPython.
TEST(IndexCompat, XsvConfigCarriesSeparator) {
  ShardEntry e;
  e.format = "xsv";
  e.columns = {{"a", "int"}, {"b", "str"}};
  e.newline = "\n";
  e.separator = "|";
  e.size_limit = 1 << 26;
  EXPECT_EQ(*SerializeShardConfig(e),
            R"({"column_encodings": ["int", "str"], "column_names": ["a", "b"], "compression": null, )"
            R"("format": "xsv", "hashes": [], "newline": "\n", "separator": "|", "size_limit": 67108864, )"
            R"("version": 2})");
}

}  // namespace
}  // namespace sluice

// sluice_stream_shard_table and sluice_stream_shard_entry: the shards of a
// streaming dataset described in bulk and one by one, as a binding reads
// them, against the fixtures' index.json files (read by sluice_index_shards).
#include "sluice.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/temp_dir.h"

namespace {

const std::string kShardTableMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";

class ShardTableCApi : public ::testing::Test {
 protected:
  std::string Stream(const std::string& fixture) const {
    return R"({"remote": ")" + kShardTableMds + fixture + R"(", "local": ")" + cache_.path() +
           "/" + fixture + R"("})";
  }
  std::string Config(const std::string& streams) const {
    return R"({"streams": [)" + streams +
           R"(], "allow_unsafe_types": true, "world": {"rank": 0, "world_size": 1}})";
  }
  sluice::testing::TempDir cache_{"sluice_c_shard_table"};
};

// The entries of a fixture's index.json, each as sluice_index_shards
// writes it (split at the top level of its JSON array).
std::vector<std::string> IndexEntriesOf(const std::string& fixture) {
  const std::string path = kShardTableMds + fixture + "/index.json";
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const std::string data = text.str();
  char* json = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(sluice_index_shards(reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                                path.c_str(), &json, &size),
            SLUICE_OK)
      << sluice_last_error();
  std::string all(json, size);
  sluice_free(json);
  std::vector<std::string> out;
  int depth = 0;
  bool in_string = false;
  size_t start = 0;
  for (size_t i = 1; i + 1 < all.size(); ++i) {
    const char c = all[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) start = i;
    } else if (c == '}') {
      if (--depth == 0) out.push_back(all.substr(start, i + 1 - start));
    }
  }
  return out;
}

std::string EntryOf(const sluice_stream* s, uint64_t g) {
  char* json = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(sluice_stream_shard_entry(s, g, &json, &size), SLUICE_OK) << sluice_last_error();
  if (json == nullptr) return "";
  std::string out(json, size);
  EXPECT_EQ(out, std::string(json));  // NUL-terminated at *json_size
  sluice_free(json);
  return out;
}

TEST_F(ShardTableCApi, TwoStreamsTableAndEntries) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(
                Config(Stream("compressed_zstd_hashed") + ", " + Stream("tsv_plain")).c_str(), &s),
            SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_num_shards(s), 8u);
  std::vector<uint64_t> samples(8, 99);
  std::vector<uint32_t> streams(8, 99);
  ASSERT_EQ(sluice_stream_shard_table(s, samples.data(), streams.data(), 8), SLUICE_OK)
      << sluice_last_error();
  // The fixtures' index.json files: 7 6 7 6 6, then 59 57 34.
  EXPECT_EQ(samples, (std::vector<uint64_t>{7, 6, 7, 6, 6, 59, 57, 34}));
  EXPECT_EQ(streams, (std::vector<uint32_t>{0, 0, 0, 0, 0, 1, 1, 1}));
  for (uint64_t g = 0; g < 8; ++g) {  // what sluice_stream_shard_info says of each
    uint64_t n = 0;
    uint32_t stream = 0;
    ASSERT_EQ(sluice_stream_shard_info(s, g, &n, &stream), SLUICE_OK);
    EXPECT_EQ(n, samples[g]);
    EXPECT_EQ(stream, streams[g]);
  }
  // More room than shards: the first 8 are written, the rest left alone.
  std::vector<uint64_t> roomy(10, 99);
  std::vector<uint32_t> roomy_streams(10, 99);
  ASSERT_EQ(sluice_stream_shard_table(s, roomy.data(), roomy_streams.data(), 10), SLUICE_OK);
  EXPECT_EQ(roomy, (std::vector<uint64_t>{7, 6, 7, 6, 6, 59, 57, 34, 99, 99}));
  EXPECT_EQ(roomy_streams, (std::vector<uint32_t>{0, 0, 0, 0, 0, 1, 1, 1, 99, 99}));

  // Each global shard's entry is its stream's index.json entry, in order.
  std::vector<std::string> expected = IndexEntriesOf("compressed_zstd_hashed");
  for (const std::string& e : IndexEntriesOf("tsv_plain")) expected.push_back(e);
  ASSERT_EQ(expected.size(), 8u);
  for (uint64_t g = 0; g < 8; ++g) EXPECT_EQ(EntryOf(s, g), expected[g]) << "shard " << g;
  EXPECT_EQ(EntryOf(s, 5),
            R"({"column_encodings": ["int", "str", "float"], "column_names": ["id", "name", "score"], )"
            R"("compression": null, "format": "tsv", "hashes": [], "newline": "\n", )"
            R"("raw_data": {"basename": "shard.00000.tsv", "bytes": 2040, "hashes": {}}, )"
            R"("raw_meta": {"basename": "shard.00000.tsv.meta", "bytes": 433, "hashes": {}}, )"
            R"("samples": 59, "size_limit": 2048, "version": 2, "zip_data": null, "zip_meta": null})");
  const std::string first = EntryOf(s, 1);
  EXPECT_NE(first.find(R"("raw_data": {"basename": "shard.00001.mds", "bytes": 12617, "hashes": )"
                       R"({"sha1": "1e0ac8bdc4cebd4d5252b24eb2f0262db2a183f9", )"
                       R"("xxh3_64": "69de384d5a3ece05", "xxh64": "1900de76b44d6b98"}}, )"
                       R"("samples": 6, "size_limit": 16384, "version": 2, "zip_data": )"
                       R"({"basename": "shard.00001.mds.zstd", "bytes": 5460, )"),
            std::string::npos)
      << first;
  sluice_stream_close(s);
}

TEST_F(ShardTableCApi, ErrorsAndNullArguments) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(Stream("tsv_plain")).c_str(), &s), SLUICE_OK)
      << sluice_last_error();
  std::vector<uint64_t> samples(3, 99);
  std::vector<uint32_t> streams(3, 99);
  EXPECT_EQ(sluice_stream_shard_table(s, samples.data(), streams.data(), 2), SLUICE_ERANGE);
  EXPECT_STREQ(sluice_last_error(),
               "out of range: sluice_stream_shard_table: room for 2 shards, the dataset has 3");
  EXPECT_EQ(samples, (std::vector<uint64_t>{99, 99, 99}));  // nothing written
  EXPECT_EQ(sluice_stream_shard_table(s, nullptr, streams.data(), 3), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_stream_shard_table: argument 'samples' must not be NULL");
  EXPECT_EQ(sluice_stream_shard_table(s, samples.data(), nullptr, 3), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_stream_shard_table: argument 'streams' must not be NULL");
  EXPECT_EQ(sluice_stream_shard_table(nullptr, samples.data(), streams.data(), 3), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_stream_shard_table: argument 's' must not be NULL");

  char* json = reinterpret_cast<char*>(1);
  EXPECT_EQ(sluice_stream_shard_entry(s, 3, &json, nullptr), SLUICE_ERANGE);
  EXPECT_EQ(json, nullptr);
  EXPECT_STREQ(sluice_last_error(), "out of range: sluice_stream_shard_entry: shard 3 of 3");
  EXPECT_EQ(sluice_stream_shard_entry(s, 0, nullptr, nullptr), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_stream_shard_entry: argument 'out_json' must not be NULL");
  EXPECT_EQ(sluice_stream_shard_entry(nullptr, 0, &json, nullptr), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_stream_shard_entry: argument 's' must not be NULL");
  ASSERT_EQ(sluice_stream_shard_entry(s, 2, &json, nullptr), SLUICE_OK);  // size optional
  EXPECT_NE(std::string(json).find(R"("samples": 34, )"), std::string::npos) << json;
  sluice_free(json);
  sluice_stream_close(s);
}

// Shards that no index.json describes: a raw-file stream's files.
TEST_F(ShardTableCApi, RawFileShardsAreTheirCounts) {
  const std::string data = cache_.path() + "/files";
  std::filesystem::create_directories(data);
  std::ofstream(data + "/a.txt") << "one";
  std::ofstream(data + "/b.txt") << "two";
  sluice_stream* s = nullptr;
  const std::string stream = R"({"remote": ")" + data + R"(", "local": ")" + cache_.path() +
                             R"(/files_cache", "files": true})";
  ASSERT_EQ(sluice_stream_open(Config(stream).c_str(), &s), SLUICE_OK) << sluice_last_error();
  const uint64_t n = sluice_stream_num_shards(s);
  ASSERT_GE(n, 1u);
  std::vector<uint64_t> samples(n);
  std::vector<uint32_t> streams(n);
  ASSERT_EQ(sluice_stream_shard_table(s, samples.data(), streams.data(), n), SLUICE_OK);
  uint64_t total = 0;
  for (uint64_t g = 0; g < n; ++g) {
    total += samples[g];
    EXPECT_EQ(EntryOf(s, g), "{\"samples\": " + std::to_string(samples[g]) + "}");
  }
  EXPECT_EQ(total, 2u);
  sluice_stream_close(s);
}

}  // namespace

// single_pass applies only to a stream with a remote (ReadsInSinglePass,
// which StreamingDataset stores in the stream's options as it adds it): a
// local-only stream asking for it reads exactly as without it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

TEST(SinglePass, OnlyAStreamWithARemoteReadsInASinglePass) {
  StreamOptions s;
  s.single_pass = true;
  EXPECT_FALSE(ReadsInSinglePass(s));
  s.remote = "https://example.com/data";
  EXPECT_TRUE(ReadsInSinglePass(s));
  s.single_pass = false;
  EXPECT_FALSE(ReadsInSinglePass(s));
}

// Its options say so, its files have their local paths, and it reads the
// same samples in the same order as the stream without single_pass.
TEST(SinglePass, ALocalOnlyStreamReadsInPlaceAsWithout) {
  ScratchDir data;
  testing::WriteSyntheticMds(data.path(), 120, 2000);
  std::vector<std::vector<int64_t>> ids;
  std::vector<std::vector<std::string>> bytes;
  for (bool single_pass : {false, true}) {
    DatasetOptions o = testing::OneStreamOptions("", data.path());
    o.streams[0].single_pass = single_pass;
    o.plan.shuffle = true;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    EXPECT_FALSE((*ds)->options().streams[0].single_pass);
    ASSERT_GT((*ds)->num_shards(), 1u);
    for (size_t g = 0; g < (*ds)->num_shards(); ++g) {
      auto file = (*ds)->shard_file(g);
      ASSERT_TRUE(file.ok()) << file.status().message();
      EXPECT_EQ(*file, (*ds)->shard_path(g));
      EXPECT_TRUE(FileExists(*file)) << *file;
    }
    bytes.emplace_back();
    ids.push_back(testing::ReadEpoch(**ds, 0, 0, 0, 1, 7, &bytes.back()));
  }
  EXPECT_EQ(ids[0].size(), 120u);
  EXPECT_EQ(ids[1], ids[0]);
  EXPECT_EQ(bytes[1], bytes[0]);
}

// Mosaic's check of cache_limit above the index.json files counts a
// local-only stream's index.json, single_pass or not; only a stream read in
// a single pass (a remote) caches nothing and is left out.
TEST(SinglePass, CacheLimitCountsALocalOnlyStreamsIndexAsWithout) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 120, 2000);
  auto index_size = FileSize(remote.path() + "/index.json");
  ASSERT_TRUE(index_size.ok());
  const std::string refused =
      "ValueError: Minimum cache usage (" + std::to_string(*index_size) +
      " bytes) is larger than the cache limit (" + std::to_string(*index_size) +
      " bytes). Please raise `cache_limit`. Recommendation is to provide a `cache_limit` as "
      "high as possible to avoid thrashing.";
  auto open = [&](const std::string& from, bool single_pass) {
    DatasetOptions o = testing::OneStreamOptions(from, from.empty() ? remote.path() : cache.path());
    o.cache_limit = *index_size;
    o.mosaic_cache_limit_checks = true;
    o.streams[0].single_pass = single_pass;
    return StreamingDataset::Open(o);
  };
  for (bool single_pass : {false, true}) {
    auto local_only = open("", single_pass);
    ASSERT_FALSE(local_only.ok()) << single_pass;
    EXPECT_EQ(local_only.status().message(), refused) << single_pass;
  }
  auto cached = open(remote.path(), false);
  ASSERT_FALSE(cached.ok());
  EXPECT_EQ(cached.status().message(), refused);
  auto one_pass = open(remote.path(), true);
  EXPECT_TRUE(one_pass.ok()) << one_pass.status().message();
}

}  // namespace
}  // namespace sluice

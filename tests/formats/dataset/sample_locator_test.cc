// SampleLocator against the definition: the shard of id is the last shard
// whose first id is <= id (shards of 0 samples hold none).
#include "formats/dataset/sample_locator.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

namespace sluice {
namespace {

std::vector<uint64_t> Starts(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> starts{0};
  for (uint64_t n : sizes) starts.push_back(starts.back() + n);
  return starts;
}

void ExpectEveryIdLocated(const std::vector<uint64_t>& sizes) {
  const std::vector<uint64_t> starts = Starts(sizes);
  SampleLocator locator(starts);
  ASSERT_EQ(locator.total(), starts.back());
  ASSERT_EQ(locator.num_shards(), sizes.size());
  size_t g = 0;
  for (uint64_t id = 0; id < starts.back(); ++id) {
    while (starts[g + 1] <= id) ++g;
    auto [shard, i] = locator.Locate(id);
    ASSERT_EQ(shard, g) << "id " << id;
    ASSERT_EQ(i, id - starts[g]) << "id " << id;
    ASSERT_GT(sizes[shard], 0u);
  }
}

TEST(SampleLocator, EqualShards) { ExpectEveryIdLocated(std::vector<uint64_t>(16, 62500)); }

TEST(SampleLocator, OneShardAndOneSample) {
  ExpectEveryIdLocated({1});
  ExpectEveryIdLocated({1000});
}

TEST(SampleLocator, EmptyShardsAreSkipped) { ExpectEveryIdLocated({0, 0, 3, 0, 1, 0, 0, 5, 0}); }

TEST(SampleLocator, OneHugeShardAmongTinyOnes) {
  std::vector<uint64_t> sizes(200, 1);
  sizes[77] = 100000;  // most buckets fall in it; the tiny ones share buckets
  ExpectEveryIdLocated(sizes);
}

TEST(SampleLocator, RandomLayouts) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint64_t> sizes(1 + rng() % 50);
    for (auto& n : sizes) n = rng() % 4 == 0 ? 0 : rng() % (rng() % 2 ? 10 : 3000);
    ExpectEveryIdLocated(sizes);
  }
}

TEST(SampleLocator, NoSamples) {
  SampleLocator none(Starts({0, 0}));
  EXPECT_EQ(none.total(), 0u);
  EXPECT_EQ(none.num_shards(), 2u);
  SampleLocator empty;
  EXPECT_EQ(empty.total(), 0u);
  EXPECT_EQ(empty.num_shards(), 0u);
}

}  // namespace
}  // namespace sluice

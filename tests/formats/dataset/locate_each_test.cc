// LocateEach against SampleLocator::Locate, id by id: its shortcut (the
// previous id's shard checked first) must never change an answer.
#include "formats/dataset/locate_each.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

SampleLocator FromSizes(const std::vector<uint64_t>& sizes) {
  std::vector<uint64_t> starts{0};
  for (uint64_t n : sizes) starts.push_back(starts.back() + n);
  return SampleLocator(std::move(starts));
}

void ExpectAsLocate(const SampleLocator& locator, const std::vector<int64_t>& ids) {
  std::vector<size_t> shard(ids.size(), 999), shard_only(ids.size(), 999);
  std::vector<uint32_t> local(ids.size(), 999);
  LocateEach(locator, ids, shard.data(), local.data());
  LocateEach(locator, ids, shard_only.data(), nullptr);
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto [g, i] = locator.Locate(uint64_t(ids[k]));
    ASSERT_EQ(shard[k], g) << "position " << k << ", id " << ids[k];
    ASSERT_EQ(local[k], i) << "position " << k << ", id " << ids[k];
    ASSERT_EQ(shard_only[k], g) << "position " << k << ", id " << ids[k];
  }
}

// Each shard's first and last ids, every neighbour across each boundary
// (forwards and backwards, over empty shards too), and an id repeated.
TEST(LocateEach, ShardEdgesBothWaysOverEmptyShards) {
  const SampleLocator locator = FromSizes({0, 4, 0, 0, 1, 3, 0, 5, 0});
  EXPECT_EQ(locator.total(), 13u);
  const std::vector<int64_t> ids{0, 3, 4, 3, 5, 4, 5, 7, 8, 12, 8, 7, 0, 0, 12, 12, 11, 4};
  ExpectAsLocate(locator, ids);
  std::vector<size_t> shard(ids.size());
  std::vector<uint32_t> local(ids.size());
  LocateEach(locator, ids, shard.data(), local.data());
  EXPECT_EQ(shard, (std::vector<size_t>{1, 1, 4, 1, 5, 4, 5, 5, 7, 7, 7, 5, 1, 1, 7, 7, 7, 4}));
  EXPECT_EQ(local, (std::vector<uint32_t>{0, 3, 0, 3, 0, 0, 0, 2, 0, 4, 0, 2, 0, 0, 4, 4, 3, 0}));
}

TEST(LocateEach, OrdersInPlaceShuffledAndEmpty) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint64_t> sizes(1 + rng() % 40);
    for (auto& n : sizes) n = rng() % 4 == 0 ? 0 : 1 + rng() % 2000;
    const SampleLocator locator = FromSizes(sizes);
    std::vector<int64_t> ids(locator.total());
    std::iota(ids.begin(), ids.end(), 0);
    ExpectAsLocate(locator, ids);  // in place: long runs
    // Shuffled within blocks of 300 ids (runs that end anywhere), then all.
    for (size_t b = 0; b < ids.size(); b += 300) {
      std::shuffle(ids.begin() + b, ids.begin() + std::min(ids.size(), b + 300), rng);
    }
    ExpectAsLocate(locator, ids);
    std::shuffle(ids.begin(), ids.end(), rng);
    ExpectAsLocate(locator, ids);
  }
  ExpectAsLocate(FromSizes({3, 0}), {});
}

}  // namespace
}  // namespace sluice

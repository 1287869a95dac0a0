// StablePosSort: the order of std::stable_sort by position, exactly, for
// spread positions (one insertion pass) and for crowds of positions that
// share a key out of order (sorted key by key).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/planner/stable_pos_sort.h"

namespace sluice::planner {
namespace {

std::vector<int64_t> SortedIds(std::vector<PosId> v) {
  StablePosSort sorter;
  sorter.Sort(v);
  std::vector<int64_t> ids;
  for (const PosId& e : v) ids.push_back(e.id);
  return ids;
}

std::vector<int64_t> StableSortedIds(std::vector<PosId> v) {
  std::stable_sort(v.begin(), v.end(), [](const PosId& a, const PosId& b) { return a.pos < b.pos; });
  std::vector<int64_t> ids;
  for (const PosId& e : v) ids.push_back(e.id);
  return ids;
}

TEST(StablePosSortTest, SpreadPositionsAndTiesInStableOrder) {
  std::mt19937_64 rng(7);
  std::vector<PosId> v;
  for (int64_t i = 0; i < 100000; ++i) {
    // Every tenth position repeats the one before it: ties keep id order.
    const double pos = i % 10 == 0 && i > 0 ? v.back().pos : double(rng() % 100000) + 0.25;
    v.push_back({pos, i});
  }
  EXPECT_EQ(SortedIds(v), StableSortedIds(v));
}

TEST(StablePosSortTest, CrowdedKeysOutOfOrderAreSortedKeyByKey) {
  // 5,000 entries in a width of 1e-6 between two far ends: all share one
  // key, reversed and shuffled (entries move past far more than 32), with
  // ties among them.
  std::mt19937_64 rng(11);
  std::vector<PosId> v{{0.0, 0}};
  for (int64_t i = 1; i <= 5000; ++i) v.push_back({0.5 + double(rng() % 1000) * 1e-9, i});
  v.push_back({1000.0, 5001});
  std::reverse(v.begin() + 1, v.begin() + 2501);  // a descending half
  const std::vector<int64_t> want = StableSortedIds(v);
  EXPECT_EQ(want.front(), 0);
  EXPECT_EQ(want.back(), 5001);
  EXPECT_EQ(SortedIds(v), want);
}

TEST(StablePosSortTest, ACrowdInOrderStaysAsItIs) {
  // 3,000 entries of one key already in order of position (and ties):
  // the insertion pass moves none of them.
  std::vector<PosId> v;
  for (int64_t i = 0; i < 3000; ++i) v.push_back({1.0 + double(i / 3) * 1e-9, i});
  v.push_back({500.0, 3000});
  std::vector<int64_t> want(3001);
  for (int64_t i = 0; i <= 3000; ++i) want[size_t(i)] = i;
  EXPECT_EQ(SortedIds(v), want);
}

}  // namespace
}  // namespace sluice::planner

// LeadMinima: the least lead after any record's batch count, against the
// least computed batch by batch; the merge past kMaxSteps; steps read back
// from a record checked.
#include "engine/dataset/lead_minima.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(LeadMinima, TheLeastAfterEachRecordIsThatOfTheBatchesSince) {
  LeadMinima m;
  EXPECT_EQ(m.After(0), std::nullopt);
  m.Close(3, 7);   // batches 1-3
  m.Close(5, 2);   // 4-5: ends the first step
  m.Close(9, 4);   // 6-9
  m.Close(10, 9);  // 10
  EXPECT_EQ(m.steps(), (std::vector<LeadStep>{{5, 2}, {9, 4}, {10, 9}}));
  EXPECT_EQ(m.After(0), 2u);
  EXPECT_EQ(m.After(3), 2u);
  EXPECT_EQ(m.After(5), 4u);
  EXPECT_EQ(m.After(9), 9u);
  EXPECT_EQ(m.After(10), std::nullopt);
  m.Close(12, 4);  // an equal least ends the step of 6-9
  EXPECT_EQ(m.steps(), (std::vector<LeadStep>{{5, 2}, {12, 4}}));
  EXPECT_EQ(m.After(9), 4u);
}

// Random periods: every record's answer is the least of the batches after
// it, computed by brute force.
TEST(LeadMinima, RandomPeriodsMatchTheLeastOfTheirBatches) {
  std::mt19937_64 rng(40);
  for (int round = 0; round < 50; ++round) {
    LeadMinima m;
    std::vector<uint64_t> leads;        // by batch
    std::vector<uint64_t> records{0};  // batch counts at records
    for (int p = 0; p < 60; ++p) {
      const uint64_t batches = 1 + rng() % 5;
      uint64_t least = UINT64_MAX;
      for (uint64_t b = 0; b < batches; ++b) {
        leads.push_back(rng() % 50);
        least = std::min(least, leads.back());
      }
      m.Close(leads.size(), least);
      records.push_back(leads.size());
      ASSERT_LE(m.steps().size(), LeadMinima::kMaxSteps);
    }
    for (uint64_t r : records) {
      const auto want = r == leads.size()
                            ? std::optional<uint64_t>()
                            : std::optional<uint64_t>(*std::min_element(leads.begin() + r, leads.end()));
      EXPECT_EQ(m.After(r), want) << "after " << r;
    }
  }
}

// Leads that rise at every record keep a step each: past kMaxSteps the two
// oldest merge, so the least after the oldest record stays exact and that
// after the merged one is the older's (lower) least.
TEST(LeadMinima, PastTheBoundTheOldestStepsMerge) {
  LeadMinima m;
  for (uint64_t k = 1; k <= LeadMinima::kMaxSteps + 1; ++k) m.Close(k, k);
  ASSERT_EQ(m.steps().size(), LeadMinima::kMaxSteps);
  EXPECT_EQ(m.steps().front(), (LeadStep{2, 1}));
  EXPECT_EQ(m.After(0), 1u);
  EXPECT_EQ(m.After(1), 1u);  // batch 2's lead is 2: the merge's cost
  EXPECT_EQ(m.After(2), 3u);
  EXPECT_EQ(m.After(LeadMinima::kMaxSteps), LeadMinima::kMaxSteps + 1);
}

TEST(LeadMinima, StepsFromARecordMustBeAsCloseLeavesThem) {
  EXPECT_TRUE(LeadMinima::FromSteps({{1, 0}, {4, 3}}).has_value());
  EXPECT_FALSE(LeadMinima::FromSteps({{4, 0}, {4, 3}}).has_value());  // counts equal
  EXPECT_FALSE(LeadMinima::FromSteps({{1, 3}, {4, 3}}).has_value());  // leasts equal
  EXPECT_FALSE(
      LeadMinima::FromSteps(std::vector<LeadStep>(LeadMinima::kMaxSteps + 1)).has_value());
  const auto read = LeadMinima::FromSteps({{2, 1}, {5, 6}});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->After(2), 6u);
}

}  // namespace
}  // namespace sluice

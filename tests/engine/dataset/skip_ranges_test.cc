// Skipped steps as positions: conversion, merging, the position a job
// reaches, and which batches each worker keeps.
#include <gtest/gtest.h>

#include "engine/dataset/skip_ranges.h"

namespace sluice {
namespace {

TEST(SkipRanges, StepsBecomePositionsOfTheGlobalBatch) {
  auto r = SkipRangesFromSteps(2, {{3, 5}, {0, 1}}, 8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<SkipRange>{{2, 24, 40}, {2, 0, 8}}));
  EXPECT_EQ(SkipRangesFromSteps(0, {{5, 5}}, 8).status().message(),
            "skip_steps: [5, 5) is not a range [first, last) with 0 <= first < last");
  EXPECT_EQ(SkipRangesFromSteps(0, {{-1, 2}}, 8).status().message(),
            "skip_steps: [-1, 2) is not a range [first, last) with 0 <= first < last");
  EXPECT_EQ(SkipRangesFromSteps(0, {{0, int64_t{1} << 46}}, 8).status().message(),
            "skip_steps: [0, 70368744177664) reaches past 2^48 samples");
}

TEST(SkipRanges, SamplesMustBeWholeSteps) {
  auto r = SkipRangesFromSamples(1, {{16, 32}}, 8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<SkipRange>{{1, 16, 32}}));
  EXPECT_EQ(SkipRangesFromSamples(1, {{16, 30}}, 8).status().message(),
            "skip_samples: [16, 30) is not whole steps: its bounds must be multiples of the "
            "global batch 8");
}

TEST(SkipRanges, MergeSortsAndJoinsOverlapsPerEpoch) {
  EXPECT_EQ(MergeSkipRanges({{1, 40, 48}, {0, 8, 16}, {0, 16, 24}, {0, 0, 4}, {1, 8, 16},
                             {0, 10, 12}}),
            (std::vector<SkipRange>{{0, 0, 4}, {0, 8, 24}, {1, 8, 16}, {1, 40, 48}}));
}

TEST(SkipRanges, PositionPassesOverWhatIsSkipped) {
  const std::vector<SkipRange> r{{0, 16, 32}, {0, 40, 48}, {1, 0, 8}};
  EXPECT_EQ(PositionAfter(r, 0, 0, 8), 8);
  EXPECT_EQ(PositionAfter(r, 0, 0, 15), 15);
  EXPECT_EQ(PositionAfter(r, 0, 0, 16), 32);  // reached exactly: passed over
  EXPECT_EQ(PositionAfter(r, 0, 0, 17), 33);
  EXPECT_EQ(PositionAfter(r, 0, 0, 24), 48);
  EXPECT_EQ(PositionAfter(r, 0, 0, 30), 54);
  EXPECT_EQ(PositionAfter(r, 0, 20, 0), 32);  // a start inside a range
  EXPECT_EQ(PositionAfter(r, 0, 32, 4), 36);
  EXPECT_EQ(PositionAfter(r, 2, 0, 5), 5);    // another epoch's ranges do not count
  EXPECT_EQ(PositionAfter(r, 1, 0, 0), 8);
}

TEST(SkipRanges, AheadMustBeWholeSteps) {
  const std::vector<SkipRange> r{{0, 16, 32}};
  EXPECT_TRUE(CheckSkipsAhead(r, 0, 8, 4, 2).ok());
  EXPECT_TRUE(CheckSkipsAhead(r, 0, 32, 3, 1).ok());  // nothing ahead
  EXPECT_TRUE(CheckSkipsAhead(r, 1, 3, 4, 2).ok());
  EXPECT_EQ(CheckSkipsAhead(r, 0, 4, 4, 2).message(),
            "skipping steps: the resume position 4 of epoch 0 is not a whole step (a multiple "
            "of the global batch 8 = batch_size 4 x 2 ranks)");
  EXPECT_EQ(CheckSkipsAhead(r, 0, 0, 3, 2).message(),
            "skipping steps: the skipped samples [16, 32) of epoch 0 are not a whole step (a "
            "multiple of the global batch 6 = batch_size 3 x 2 ranks)");
}

TEST(SkipRanges, WorkersGetTheKeptBatchesInTurn) {
  // A rank's ids from step 2 on, batches of 2, global batch 4 (2 ranks);
  // steps 3 and 5 skipped.
  const std::vector<int64_t> rank{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  const std::vector<SkipRange> r{{0, 12, 16}, {0, 20, 24}};
  EXPECT_EQ(WorkerIdsSkipping(rank, r, 0, 2, 2, 2, 0, 1),
            (std::vector<int64_t>{10, 11, 14, 15, 18, 19, 20}));
  EXPECT_EQ(WorkerIdsSkipping(rank, r, 0, 2, 2, 2, 0, 2), (std::vector<int64_t>{10, 11, 18, 19}));
  EXPECT_EQ(WorkerIdsSkipping(rank, r, 0, 2, 2, 2, 1, 2), (std::vector<int64_t>{14, 15, 20}));
  // Another epoch's ranges skip nothing here.
  EXPECT_EQ(WorkerIdsSkipping(rank, r, 1, 2, 2, 2, 0, 1), rank);
}

}  // namespace
}  // namespace sluice

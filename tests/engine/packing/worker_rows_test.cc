#include "engine/packing/worker_rows.h"

#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PackWorkerRows, BatchesDealtInTurn) {
  // 10 rows in batches of 4 over 2 workers: w0, w1, then half a batch of w0.
  EXPECT_EQ(WorkerRows(10, 4, 0, 2), 6u);
  EXPECT_EQ(WorkerRows(10, 4, 1, 2), 4u);
  EXPECT_EQ(WorkerRows(0, 4, 1, 2), 0u);
  EXPECT_EQ(WorkerRows(7, 1, 2, 3), 2u);  // batches 2 and 5
  EXPECT_EQ(WorkerRows(7, 1, 0, 3), 3u);  // 0, 3, 6
  for (uint64_t rows = 0; rows < 50; ++rows) {
    uint64_t sum = 0;
    for (uint64_t w = 0; w < 3; ++w) sum += WorkerRows(rows, 4, w, 3);
    EXPECT_EQ(sum, rows);
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(PackResumePoint, ANewDataLoaderStartsWithTheWorkerWhoseTurnItIs) {
  // 3 whole batches of 4 over 2 workers: w0, w1, w0 done; w1's turn.
  const PackResumePoint w0 = ResumePoint(12, 4, 0, 2);
  const PackResumePoint w1 = ResumePoint(12, 4, 1, 2);
  EXPECT_EQ(w0.role, 1u);
  EXPECT_EQ(w0.rows, 4u);
  EXPECT_EQ(w1.role, 0u);
  EXPECT_EQ(w1.rows, 8u);
  EXPECT_EQ(ResumePoint(12, 4, 0, 1).rows, 12u);
}

// Workers of 2, 6 and 4 rows, batches of 2: the DataLoader deals rounds
// w0 w1 w2 | w1 w2 | w1 (worker 0 ran out after round 0).
TEST(PackWorkerRows, TheTailResumePointFollowsTheRoundsAfterAWorkerRanOut) {
  const std::vector<uint64_t> totals{2, 6, 4};
  auto at = [&](uint64_t rank_rows, uint64_t worker) {
    const PackResumePoint p = TailResumePoint(totals, rank_rows, 2, worker);
    return std::pair<uint64_t, uint64_t>(p.role, p.rows);
  };
  // 8 rows: w0 2, w1 4, w2 2 dealt; w2's turn: worker 0 plays it.
  EXPECT_EQ(at(8, 0), (std::pair<uint64_t, uint64_t>(2, 2)));
  EXPECT_EQ(at(8, 1), (std::pair<uint64_t, uint64_t>(0, 2)));  // ran out: stops at once
  EXPECT_EQ(at(8, 2), (std::pair<uint64_t, uint64_t>(1, 4)));
  // 7 rows: w1's second batch half dealt: worker 0 goes on with it.
  EXPECT_EQ(at(7, 0), (std::pair<uint64_t, uint64_t>(1, 3)));
  // 10 rows: only w1's last batch is left; the turn passes w0 (ran out).
  EXPECT_EQ(at(10, 0), (std::pair<uint64_t, uint64_t>(0, 2)));
  EXPECT_EQ(at(10, 1), (std::pair<uint64_t, uint64_t>(1, 4)));
  // Before any worker ran out it is ResumePoint's.
  for (uint64_t rows : {0, 2, 4, 6}) {
    for (uint64_t w = 0; w < 3; ++w) {
      const PackResumePoint tail = TailResumePoint(totals, rows, 2, w);
      const PackResumePoint plain = ResumePoint(rows, 2, w, 3);
      EXPECT_EQ(tail.role, plain.role) << rows << " " << w;
      EXPECT_EQ(tail.rows, plain.rows) << rows << " " << w;
    }
  }
}

}  // namespace
}  // namespace sluice

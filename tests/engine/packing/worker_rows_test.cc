#include "engine/packing/worker_rows.h"

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

}  // namespace
}  // namespace sluice

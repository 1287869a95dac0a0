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

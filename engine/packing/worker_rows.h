// How many of a rank's rows each DataLoader worker handed out: the rule a
// packed resume uses to give every worker its own place back.
// A torch DataLoader over an IterableDataset takes batch i from worker
// i % num_workers, each batch `batch_size` rows of one worker; this holds
// while every worker still has rows (the checkpoint is not in the epoch's
// tail where a worker ran out first). Pure function; thread-safe.
#pragma once

#include <cstdint>

namespace sluice {

// Rows worker `worker` (< num_workers) handed out when its rank consumed
// `rank_rows` rows in batches of `batch_size` (> 0): the whole batches
// dealt to it in turn, plus the part of a last partial batch when that
// batch was its.
uint64_t WorkerRows(uint64_t rank_rows, uint64_t batch_size, uint64_t worker, uint64_t num_workers);

}  // namespace sluice

// Where each DataLoader worker resumes a rank's packed rows: the rule a
// packed resume uses to give every worker its own place back.
// A torch DataLoader over an IterableDataset takes batch i from worker
// i % num_workers, each batch `batch_size` rows of one worker, and starts
// again from worker 0 when it is made anew. So after the rank consumed
// rank_rows rows (batches b = rank_rows / batch_size), the resumed
// DataLoader's worker j must hand out what worker (j + b) % num_workers
// would have next: it takes that worker's role (its samples) and skips the
// rows that role handed out. Exact while every worker still has rows (the
// checkpoint is not in the epoch's tail where a worker ran out first);
// TailResumePoint is exact in the tail too, from each worker's rows.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice {

// Rows worker `worker` (< num_workers) handed out when its rank consumed
// `rank_rows` rows in batches of `batch_size` (> 0): the whole batches
// dealt to it in turn, plus the part of a last partial batch when that
// batch was its.
uint64_t WorkerRows(uint64_t rank_rows, uint64_t batch_size, uint64_t worker, uint64_t num_workers);

struct PackResumePoint {
  uint64_t role = 0;  // the worker of the saved run whose rows this worker continues
  uint64_t rows = 0;  // the rows that worker handed out (to skip)
};

// Where DataLoader worker `worker` of a resumed run starts (see above).
PackResumePoint ResumePoint(uint64_t rank_rows, uint64_t batch_size, uint64_t worker,
                            uint64_t num_workers);

// ResumePoint in an epoch's tail as well. A torch DataLoader over an
// IterableDataset deals in rounds: round i takes batch i of each worker
// that has more than i batches, in worker order (one that ran out is
// skipped: its StopIteration marks it done), and a worker's last batch may
// be short. `totals[w]` is worker w's rows in the epoch (at least the
// rows ResumePoint gives it is enough while no worker ran out: the result
// is then ResumePoint's). The resumed DataLoader's worker j plays the
// role after the last dealt batch's, j places on (the rounds go on in the
// same cyclic order, a role with nothing left stopping at once), and
// skips the rows dealt to that role. Time: O(batches) in the tail.
// The rows each worker was dealt (dealt[w]) when its rank consumed
// `rank_rows` rows, by TailResumePoint's rounds, and the worker the next
// round goes on from (`*next`, when not null). WorkerRows' for every
// worker while none ran out.
std::vector<uint64_t> DealtRows(const std::vector<uint64_t>& totals, uint64_t rank_rows,
                                uint64_t batch_size, uint64_t* next);

PackResumePoint TailResumePoint(const std::vector<uint64_t>& totals, uint64_t rank_rows,
                                uint64_t batch_size, uint64_t worker);

}  // namespace sluice

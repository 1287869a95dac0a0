#include "engine/packing/worker_rows.h"

namespace sluice {

uint64_t WorkerRows(uint64_t rank_rows, uint64_t batch_size, uint64_t worker,
                    uint64_t num_workers) {
  const uint64_t batches = rank_rows / batch_size;
  const uint64_t rest = rank_rows % batch_size;
  uint64_t rows = batch_size * (batches / num_workers + (worker < batches % num_workers ? 1 : 0));
  if (worker == batches % num_workers) rows += rest;
  return rows;
}

}  // namespace sluice

namespace sluice {

PackResumePoint ResumePoint(uint64_t rank_rows, uint64_t batch_size, uint64_t worker,
                            uint64_t num_workers) {
  const uint64_t role = (worker + rank_rows / batch_size) % num_workers;
  return {role, WorkerRows(rank_rows, batch_size, role, num_workers)};
}

}  // namespace sluice

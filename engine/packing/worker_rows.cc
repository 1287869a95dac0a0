#include "engine/packing/worker_rows.h"

#include <algorithm>

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

namespace sluice {

std::vector<uint64_t> DealtRows(const std::vector<uint64_t>& totals, uint64_t rank_rows,
                                uint64_t batch_size, uint64_t* next) {
  const uint64_t workers = totals.size();
  // Deal round by round until rank_rows rows are dealt.
  std::vector<uint64_t> dealt(workers, 0);
  uint64_t left = rank_rows, at = 0;
  for (uint64_t round = 0; left > 0; ++round) {
    bool any = false;
    for (uint64_t w = 0; w < workers && left > 0; ++w) {
      if (totals[w] <= round * batch_size) continue;  // no batch `round` here
      any = true;
      const uint64_t batch = std::min(batch_size, totals[w] - round * batch_size);
      const uint64_t take = std::min(batch, left);
      dealt[w] += take;
      left -= take;
      // A part of a batch: that worker goes on first; else the next one.
      at = take < batch ? w : (w + 1) % workers;
    }
    if (!any) break;  // every worker ran out: more rows than the epoch has
  }
  if (next != nullptr) *next = at;
  return dealt;
}

PackResumePoint TailResumePoint(const std::vector<uint64_t>& totals, uint64_t rank_rows,
                                uint64_t batch_size, uint64_t worker) {
  const uint64_t workers = totals.size();
  bool ran_out = false;
  for (uint64_t w = 0; w < workers; ++w) {
    ran_out |= totals[w] < WorkerRows(rank_rows, batch_size, w, workers);
  }
  if (!ran_out) return ResumePoint(rank_rows, batch_size, worker, workers);
  uint64_t next = 0;
  const std::vector<uint64_t> dealt = DealtRows(totals, rank_rows, batch_size, &next);
  const uint64_t role = (worker + next) % workers;
  return {role, dealt[role]};
}

}  // namespace sluice

// Sequencer checkpoints: a mixture run's state (MixtureRun::State) every
// `spacing` positions, so that a worker's plan or a resume at position P
// starts from the nearest checkpoint at or before P instead of walking the
// sequencer from 0 (README.md, "Mixture schedules", "Sequencer
// checkpoints"). The stream of each position depends on the phases alone
// (not on the seed, the epoch or the world), so one table serves every
// worker and epoch of a process planning under those phases.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/planner/mixture_schedule.h"

namespace sluice::planner {

// At most this many checkpoints in a table, and at most kMaxMixtureTableBytes
// of counts (2 x streams x 8 bytes a checkpoint): a table stops growing
// there, the positions after it walked as before.
inline constexpr int64_t kMaxMixtureCheckpoints = 16384;
inline constexpr int64_t kMaxMixtureTableBytes = int64_t{8} << 20;

// Checkpoints at positions spacing, 2 * spacing, ..., size() * spacing, in
// that order. A plain value; not thread-safe to change, safe to read from
// any number of threads.
class MixtureCheckpoints {
 public:
  // A table for `streams` streams over an epoch of `end` positions: a
  // checkpoint every 4096 positions, or wider so that the epoch fits in
  // capacity().
  MixtureCheckpoints(int64_t streams, int64_t end);
  int64_t spacing() const { return spacing_; }
  int64_t size() const { return size_; }
  // The most checkpoints the table takes: kMaxMixtureCheckpoints, fewer
  // (at least 1) when that many would pass kMaxMixtureTableBytes.
  int64_t capacity() const { return capacity_; }
  // The position of the next checkpoint Append() takes (-1: the table is full).
  int64_t next() const { return size_ < capacity_ ? (size_ + 1) * spacing_ : -1; }
  // `state` must be at next().
  void Append(const MixtureRun::State& state);
  // The latest checkpoint in (after, at_most], if any.
  std::optional<MixtureRun::State> Latest(int64_t after, int64_t at_most) const;

 private:
  int64_t streams_, capacity_, spacing_, size_ = 0;
  std::vector<int64_t> rows_;  // per checkpoint: the counts, then the phase's counts
};

// The process's table for `phases` (null when none was kept). Thread-safe.
std::shared_ptr<const MixtureCheckpoints> SharedMixtureCheckpoints(const std::vector<MixturePhase>& phases);
// Keeps `table` for `phases` when it holds more checkpoints than the one
// kept (the last few phase lists are kept). Thread-safe.
void KeepMixtureCheckpoints(const std::vector<MixturePhase>& phases, std::shared_ptr<const MixtureCheckpoints> table);
// Forgets every table: for tests and benchmarks that measure a cold start.
void DropMixtureCheckpoints();

}  // namespace sluice::planner

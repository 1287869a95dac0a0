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

// At most this many checkpoints in a table (2 * streams * 8 bytes each): a
// table stops growing there, the positions after it walked as before.
inline constexpr int64_t kMaxMixtureCheckpoints = 16384;

// Checkpoints at positions spacing, 2 * spacing, ..., size() * spacing, in
// that order. A plain value; not thread-safe to change, safe to read from
// any number of threads.
class MixtureCheckpoints {
 public:
  MixtureCheckpoints(int64_t streams, int64_t spacing) : streams_(streams), spacing_(spacing) {}
  // The spacing for an epoch of `end` positions: 4096, or wider so that
  // the epoch takes at most kMaxMixtureCheckpoints.
  static int64_t SpacingFor(int64_t end);
  int64_t spacing() const { return spacing_; }
  int64_t size() const { return size_; }
  // The position of the next checkpoint Append() takes (-1: the table is full).
  int64_t next() const { return size_ < kMaxMixtureCheckpoints ? (size_ + 1) * spacing_ : -1; }
  // `state` must be at next().
  void Append(const MixtureRun::State& state);
  // The latest checkpoint in (after, at_most], if any.
  std::optional<MixtureRun::State> Latest(int64_t after, int64_t at_most) const;

 private:
  int64_t streams_, spacing_, size_ = 0;
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

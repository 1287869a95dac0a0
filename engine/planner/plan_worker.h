// Internal: one worker's plan under random batching without building the
// whole epoch's array.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/planner/batching.h"
#include "engine/planner/part_bounds.h"
#include "engine/planner/part_reader.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {

// A worker of the planning world (replication applied).
struct PlanningWorker {
  int64_t pnode = 0, prank = 0, worker = 0;
};


// work[pnode][prank][worker] of BatchRandom (planning world), flattened
// batch-major, -1 included. Sets *py1e_narrow_block, when given, to
// PartialShuffle::py1e_narrow_block of the epoch's shuffle (false when not
// shuffling).
Result<std::vector<int64_t>> WorkerRandom(const BatchContext& ctx, int64_t pnode, int64_t prank, int64_t worker,
                                          bool* py1e_narrow_block = nullptr,
                                          const EpochCheckpoints* checkpoints = nullptr);
// WorkerRandom of several workers; under py1e and py1s one pass for all.
// With `head` >= 0 (one worker, unshuffled or py1e or py1s): only its first
// `head` non-padding slots are planned (PlanWorkerHead).
Result<std::vector<std::vector<int64_t>>> WorkersRandom(const BatchContext& ctx,
                                                        std::span<const PlanningWorker> workers,
                                                        bool* py1e_narrow_block = nullptr,
                                                        const EpochCheckpoints* checkpoints = nullptr,
                                                        int64_t head = -1,
                                                        const std::atomic<bool>* cancel = nullptr);

// The set-up py1e's and py1s's streamed plans of a worker share (the one
// owner of it): Mosaic's argument checks, the epoch's shuffle positions cut
// into canonical nodes, the block's range, and py1e's errors that come
// before any draw; then the part-by-part draws of either algorithm.
struct StreamedShuffle {
  int64_t C = 0, block = 0, total = 0;
  PartBounds parts_of{0, 1};
  BlockRange br{0, 0};
  bool py1e = false;

  // Part i's spans.
  static std::span<const Span> Part(const DividedSpans& parts, int64_t i);
  // Draws over part i as its shuffle would (*narrow and `ahead` as
  // Py1eSkipPart).
  Status Skip(std::span<const Span> list, numpy::Generator& ep, bool* narrow,
              numpy::Pcg64Ahead* ahead = nullptr) const;
  // Part i's sorted positions [lo, hi) (part_reader.h), drawn from `gen`.
  Result<std::unique_ptr<PartReader>> Open(std::span<const Span> list, numpy::Pcg64& gen, int64_t lo, int64_t hi,
                                           bool* narrow) const;
  // Open's pieces handed to `sink`; `ep` then stands at the next part.
  Status Stream(std::span<const Span> list, numpy::Generator& ep, int64_t lo, int64_t hi, const Py1eSink& sink,
                bool* narrow) const;
  // kInvalidArgument unless `k` are PlanCheckpoints of this shuffle (the
  // request's seed and epoch); else sets *narrow (when given) from them.
  Status Accept(const EpochCheckpoints& k, const PlanConfig& c, int64_t epoch, bool* narrow) const;
};
Result<StreamedShuffle> SetUpStreamedShuffle(const BatchContext& ctx, const Resampled& res);

// WorkerRandom when shuffling with py1e or py1s (any partition): memory of
// the worker's slots plus a window of the parts it reads (py1e) or one span
// (py1s) (README.md in this folder). `res` and `pa` as BatchRandom builds them; *narrow, when given,
// is set (never cleared) as PartialShuffle::py1e_narrow_block.

// Mosaic's py1e errors, which do not depend on the draws, in the order the
// whole shuffle meets them (py1s has none of its own).
Status Py1eErrorsBeforeDraws(const PartBounds& parts, int64_t C, BlockRange br);

// After the last part a worker reads (parts from `from` on): sets *narrow
// if a later span's block is narrower than the span, drawing only where that
// depends on the draws (a span size in (lo, hi)).
Status Py1eNarrowAfter(const DividedSpans& parts, int64_t from, int64_t C, BlockRange br, numpy::Generator& ep,
                       bool* narrow);

// With `checkpoints` (checked against the request) the nodes before the
// worker's are not drawn over and *narrow is the checkpoints' flag. Several
// workers are planned in one pass over the parts any of them reads (each
// part drawn once, not once per worker); the result holds each one's plan,
// in the order given. `cancel` is checked per part (CheckPlanCancelled).
Result<std::vector<std::vector<int64_t>>> WorkersRandomStreamed(const BatchContext& ctx, const Resampled& res,
                                                               const PartitionArgs& pa,
                                                               std::span<const PlanningWorker> workers, bool* narrow,
                                                               const EpochCheckpoints* checkpoints = nullptr,
                                                               int64_t head = -1,
                                                               const std::atomic<bool>* cancel = nullptr);

// PlanWorkerWindows's windowed path for one planning worker: false, before
// anything reaches `sink`, when it does not apply (shuffled by another
// algorithm, or the worker's positions are not in the epoch's order).
// *narrow as WorkersRandomStreamed's. `cancel` as PlanWorkerWindows's.
// With `checkpoints` (checked as WorkersRandomStreamed's) each canonical
// node read starts from its saved state: nothing before it is drawn.
Result<bool> WorkerRandomWindows(const BatchContext& ctx, const PlanningWorker& worker, int64_t window,
                                 const PlanWindowSink& sink, bool* narrow,
                                 const std::atomic<bool>* cancel = nullptr,
                                 const EpochCheckpoints* checkpoints = nullptr);

// Keeps the slots up to the `head`-th non-padding one (all when head < 0).
void KeepHead(std::vector<int64_t>& slots, int64_t head);

}  // namespace sluice::planner

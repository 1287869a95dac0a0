// Internal: the plan of an epoch under a mixture schedule
// (PlanConfig::mixture): the schedule's global sequence of streams, each
// stream's passes in its shuffled order, dealt to workers in global-batch
// order (README.md, "Mixture schedules").
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/planner/batching.h"
#include "engine/planner/mixture_schedule.h"

namespace sluice::planner {

// Checks what a mixture requires of the rest of the request (random
// batching, no per-stream weights, epoch_size) and quantizes the schedule.
// Errors: ValueError "mixture: ...".
Result<QuantizedMixture> CheckMixtureRequest(const PlanRequest& request);

// The phases of the request's epoch: the schedules of its mixture_past for
// that epoch, each from the previous change (or 0), then its mixture from
// the last change. Errors: CheckMixtureRequest's; a past schedule QuantizeMixture
// refuses ("mixture: the schedule replaced at <until> of epoch <e>: ...");
// changes of an epoch not after 0 or not increasing.
Result<std::vector<MixturePhase>> MixtureRequestPhases(const PlanRequest& request);

// The order of stream `stream`'s pass `pass` in `epoch`: global sample ids,
// each of the stream's samples once. It is the stream's shuffle (the
// configured algorithm, seed and block size, over min(C, samples) canonical
// nodes, shuffle epoch = epoch + pass * 2^32) read as Mosaic's orig
// partition reads it for one node and one rank: column by column across the
// canonical nodes, without the partition's padding repeats.
Result<std::vector<int64_t>> MixtureStreamPass(const BatchContext& ctx, int64_t stream, int64_t pass);

// The same order as an index function: the shuffle's permutation alone
// (nothing when unshuffled) and the canonical nodes that hold one sample
// more than the others. 8 bytes per sample of the stream when shuffled.
class StreamPass {
 public:
  static Result<StreamPass> Make(const BatchContext& ctx, int64_t stream, int64_t pass);
  // The k-th sample of the pass (0 <= k < size()), a global id.
  int64_t operator[](int64_t k) const;
  int64_t size() const { return n_; }

 private:
  int64_t n_ = 0, C_ = 1, columns_ = 0, first_ = 0;
  std::vector<int64_t> perm_;       // empty: unshuffled
  std::vector<int64_t> long_rows_;  // canonical nodes with `columns_` samples
};

// Global sample ids of positions [begin, end) of the epoch's sequence.
Result<std::vector<int64_t>> MixtureSequence(const BatchContext& ctx, int64_t begin, int64_t end);

// PlanEpoch and one worker's ids (planning world; -1 padding left out).
Result<WorkArray> MixtureEpoch(const BatchContext& ctx);
Result<std::vector<int64_t>> MixtureWorker(const BatchContext& ctx, int64_t pnode, int64_t prank, int64_t worker);

}  // namespace sluice::planner

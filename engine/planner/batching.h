// Internal: Mosaic's generate_work batching methods (README section 3.7).
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/planner/plan.h"
#include "engine/planner/sampling.h"

namespace sluice::planner {

// Below this many ids a second planning thread costs more than it saves.
inline constexpr int64_t kThreadedPlanMin = int64_t{1} << 20;

struct BatchContext {
  const PlanRequest& request;
  const PlanDerived& derived;
  int64_t P() const { return derived.parallel_world.num_nodes; }
  int64_t R() const { return derived.parallel_world.ranks_per_node; }
  int64_t W() const { return derived.parallel_world.workers_per_rank; }
  int64_t B() const { return *request.config.batch_size; }
  int64_t C() const { return derived.num_canonical_nodes; }
};

// resample_streams(epoch) for all streams (stream < 0) or one stream.
Result<Resampled> Resample(const BatchContext& ctx, int64_t stream);

// Maps x != -1 through the resampling table (nothing to do for the identity).
void MapSmall(std::vector<int64_t>& ids, const Resampled& r);

// One stream's partition over (P, R, W, B), shuffled with
// int(block * proportion) when shuffling is on, mapped to global ids.
Result<WorkArray> StreamWork(const BatchContext& ctx, int64_t stream, int64_t P, int64_t B);

Result<WorkArray> BatchRandom(const BatchContext& ctx);
// BatchRandom as Mosaic computes it: partition, whole permutation, remap.
Result<WorkArray> BatchRandomGeneric(const BatchContext& ctx);
// Whether BatchRandomPy1e can produce this plan: shuffling with py1e over an
// orig partition (or a relaxed one equal to it) that is plain (no pad
// columns, not tiny). Partition errors answer false.
bool Py1eDirectApplies(const BatchContext& ctx, const PartitionArgs& pa);
// BatchRandom for such plans: each canonical node's shuffled ids written
// straight to their slots (see batching_random_py1e.cc). `pa` as BatchRandom
// builds it.
Result<WorkArray> BatchRandomPy1e(const BatchContext& ctx, const Resampled& res, const PartitionArgs& pa);
// BatchRandom's partition arguments.
PartitionArgs RandomPartitionArgs(const BatchContext& ctx, int64_t num_samples);
Result<WorkArray> BatchPerStream(const BatchContext& ctx);
Result<WorkArray> BatchStratified(const BatchContext& ctx);
Result<WorkArray> BatchDevicePerStream(const BatchContext& ctx);

// Rows of G = B*R*P ids (global batches) -> the (P, R, W, batches, B) array:
// drops the first sample_in_epoch // G rows, pads with -1 rows to a multiple
// of W, and deals rows (batch, worker) outer to inner.
Result<WorkArray> FinishRows(const BatchContext& ctx, std::vector<int64_t> rows);

}  // namespace sluice::planner

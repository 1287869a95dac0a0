// PlanCheckpoints: an epoch's py1e/py1s draws run once, keeping where each
// canonical node's draws start (engine/planner/README.md, "the floor").
#include "engine/planner/plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {

bool CheckpointsApply(const PlanConfig& c) {
  return !c.mixture && c.batching_method == BatchingMethod::kRandom && c.shuffle &&
         (c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s);
}

Result<EpochCheckpoints> PlanCheckpoints(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const PlanConfig& c = request.config;
  const bool py1e = c.shuffle_algo == ShuffleAlgo::kPy1e;
  if (c.mixture) return InvalidArgumentError("epoch checkpoints do not apply to a mixture schedule's plan");
  if (!CheckpointsApply(c)) {
    return InvalidArgumentError("epoch checkpoints exist for random batching shuffled with py1e or py1s only");
  }
  const BatchContext ctx{request, derived};
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  EpochCheckpoints out;
  out.algo = c.shuffle_algo;
  out.seed = c.shuffle_seed;
  out.epoch = uint64_t(request.epoch);
  out.num_canonical_nodes = ctx.C();
  out.block = derived.shuffle_block_size;
  SLUICE_ASSIGN_OR_RETURN(out.num_samples, CheckShuffleArgs(res.shuffle_units, out.num_canonical_nodes, out.block));
  const int64_t C = out.num_canonical_nodes;
  const BlockRange br = BlockBounds(out.block);
  numpy::Generator ep = MakeRng(c.shuffle_seed, out.epoch);
  const DividedSpans parts = ShuffledParts(res.shuffle_units, C, c.shuffle_seed, ep);
  out.node_start.reserve(size_t(C));
  for (int64_t i = 0; i < C; ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    out.node_start.push_back(ep.bit_generator());
    if (py1e) {
      SLUICE_RETURN_IF_ERROR(Py1eSkipPart(list, br, ep, C, &out.py1e_narrow_block));
    } else {
      Py1sStreamPart(list, ep, 0, 0, [](int64_t, const int64_t*, int64_t) {});
    }
  }
  return out;
}

}  // namespace sluice::planner

// PlanCheckpoints: an epoch's py1e/py1s draws run once, keeping where each
// canonical node's draws start (engine/planner/README.md, "the floor").
#include "engine/planner/plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"
#include "engine/random/pcg64_ahead.h"

namespace sluice::planner {

bool CheckpointsApply(const PlanConfig& c) {
  return !c.mixture && c.batching_method == BatchingMethod::kRandom && c.shuffle &&
         (c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s);
}

Result<EpochCheckpoints> PlanCheckpoints(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const PlanConfig& c = request.config;
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
  SLUICE_ASSIGN_OR_RETURN(const StreamedShuffle sh, SetUpStreamedShuffle(ctx, res));
  out.num_canonical_nodes = sh.C;
  out.block = sh.block;
  out.num_samples = sh.total;
  const int64_t C = sh.C;
  numpy::Generator ep = MakeRng(c.shuffle_seed, out.epoch);
  const DividedSpans parts = ShuffledParts(res.shuffle_units, C, c.shuffle_seed, ep);
  out.node_start.reserve(size_t(C));
  // The replay tests words that a second thread makes (the replay and the
  // making were 54% and 41% of one thread's time at 4B samples: BENCHMARKS.md).
  numpy::Pcg64Ahead ahead;
  for (int64_t i = 0; i < C; ++i) {
    out.node_start.push_back(ep.bit_generator());
    SLUICE_RETURN_IF_ERROR(sh.Skip(StreamedShuffle::Part(parts, i), ep, &out.py1e_narrow_block, &ahead));
  }
  SLUICE_RETURN_IF_ERROR(ahead.status());  // the words are right either way; its failure is still reported
  return out;
}

}  // namespace sluice::planner

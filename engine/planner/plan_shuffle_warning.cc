// PlanShuffleWarning: the warning Mosaic's py1e gives while it shuffles.
#include "engine/planner/batching.h"
#include "engine/planner/plan.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {
namespace {

// Mosaic's text as its source spells it: a string continued with backslashes
// across indented lines, so the indentation is part of it.
constexpr char kPy1eNarrowBlock[] =
    "Shuffle block size was smaller than shard size for some shards. This                  "
    "       will result in these shards not being shuffled with other shards. Set         "
    "                shuffle_block_size to a larger value for a higher quality shuffle.";

}  // namespace

Result<std::optional<std::string>> PlanShuffleWarning(const PlanRequest& request) {
  const PlanConfig& c = request.config;
  if (!c.shuffle || c.shuffle_algo != ShuffleAlgo::kPy1e ||
      c.batching_method != BatchingMethod::kRandom) {
    return std::optional<std::string>();
  }
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const BatchContext ctx{request, derived};
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  SLUICE_ASSIGN_OR_RETURN(bool narrow,
                          Py1eLeavesSpansUnshuffled(res.shuffle_units, ctx.C(), c.shuffle_seed,
                                                    uint64_t(request.epoch),
                                                    derived.shuffle_block_size));
  if (!narrow) return std::optional<std::string>();
  return std::optional<std::string>(kPy1eNarrowBlock);
}

}  // namespace sluice::planner

// random: one partition over the whole epoch, shuffled, mapped to sample ids.
#include "engine/planner/batching.h"
#include "engine/planner/shuffle.h"

namespace sluice::planner {

Result<WorkArray> BatchRandom(const BatchContext& ctx) {
  const PlanConfig& c = ctx.request.config;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  PartitionArgs pa;
  pa.num_samples = res.size();
  pa.num_canonical_nodes = ctx.C();
  pa.num_physical_nodes = ctx.P();
  pa.ranks_per_node = ctx.R();
  pa.workers_per_rank = ctx.W();
  pa.batch_size = ctx.B();
  pa.drop_first = ctx.request.sample_in_epoch;
  pa.initial_physical_nodes = c.initial_physical_nodes;
  SLUICE_ASSIGN_OR_RETURN(WorkArray x, GetPartitions(c.partition_algo, pa));
  if (c.shuffle) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                            GetShuffle(c.shuffle_algo, res.shuffle_units, ctx.C(), c.shuffle_seed,
                                       uint64_t(ctx.request.epoch), ctx.derived.shuffle_block_size));
    MapThrough(x.ids, perm);
  }
  MapSmall(x.ids, res);
  return x;
}

}  // namespace sluice::planner

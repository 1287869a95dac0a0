// random: one partition over the whole epoch, shuffled, mapped to sample ids.
#include <optional>
#include <thread>

#include "base/exception_status.h"
#include "engine/planner/batching.h"
#include "engine/planner/shuffle.h"

namespace sluice::planner {
PartitionArgs RandomPartitionArgs(const BatchContext& ctx, int64_t num_samples) {
  PartitionArgs pa;
  pa.num_samples = num_samples;
  pa.num_canonical_nodes = ctx.C();
  pa.num_physical_nodes = ctx.P();
  pa.ranks_per_node = ctx.R();
  pa.workers_per_rank = ctx.W();
  pa.batch_size = ctx.B();
  pa.drop_first = ctx.request.sample_in_epoch;
  pa.initial_physical_nodes = ctx.request.config.initial_physical_nodes;
  return pa;
}

Result<WorkArray> BatchRandom(const BatchContext& ctx) {
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  const PartitionArgs pa = RandomPartitionArgs(ctx, res.size());
  if (Py1eDirectApplies(ctx, pa)) return BatchRandomPy1e(ctx, res, pa);
  return BatchRandomGeneric(ctx);
}

Result<WorkArray> BatchRandomGeneric(const BatchContext& ctx) {
  const PlanConfig& c = ctx.request.config;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  const PartitionArgs pa = RandomPartitionArgs(ctx, res.size());
  if (!c.shuffle) {
    SLUICE_ASSIGN_OR_RETURN(WorkArray x, GetPartitions(c.partition_algo, pa));
    MapSmall(x.ids, res);
    return x;
  }
  // The partition and the shuffle are independent: for big epochs build the
  // partition on a second thread meanwhile.
  std::optional<Result<WorkArray>> partition;
  std::thread helper;
  if (res.size() >= kThreadedPlanMin && ctx.request.threads != 1) {
    // No exception may leave a thread (std::terminate): it becomes the Result.
    helper = std::thread([&] {
      try {
        partition.emplace(GetPartitions(c.partition_algo, pa));
      } catch (...) {
        partition.emplace(StatusFromException(std::current_exception(), "partitioning"));
      }
    });
  } else {
    partition.emplace(GetPartitions(c.partition_algo, pa));
  }
  auto perm = GetShuffle(c.shuffle_algo, res.shuffle_units, ctx.C(), c.shuffle_seed, uint64_t(ctx.request.epoch),
                         ctx.derived.shuffle_block_size);
  if (helper.joinable()) helper.join();
  // Mosaic partitions first, so its errors win.
  if (!partition->ok()) return partition->status();
  if (!perm.ok()) return perm.status();
  WorkArray x = std::move(*partition).value();
  MapThrough(x.ids, *perm);
  MapSmall(x.ids, res);
  return x;
}

}  // namespace sluice::planner

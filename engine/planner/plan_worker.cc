// One worker's random-batching plan: its partition slice alone, then only the
// shuffle entries it needs (py1e, py1s: plan_worker_streamed.cc).
#include "engine/planner/plan_worker.h"

#include "engine/planner/plan.h"
#include "engine/planner/shuffle.h"

namespace sluice::planner {

Result<std::vector<std::vector<int64_t>>> WorkersRandom(const BatchContext& ctx,
                                                        std::span<const PlanningWorker> workers,
                                                        bool* py1e_narrow_block, const EpochCheckpoints* checkpoints,
                                                        int64_t head, const std::atomic<bool>* cancel) {
  const PlanConfig& c = ctx.request.config;
  if (head >= 0 && (workers.size() != 1 || (c.shuffle && c.shuffle_algo != ShuffleAlgo::kPy1e &&
                                            c.shuffle_algo != ShuffleAlgo::kPy1s))) {
    return InternalError("a plan's head is for one worker, unshuffled or shuffled by py1e or py1s");
  }
  if (py1e_narrow_block != nullptr) *py1e_narrow_block = false;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, -1));
  const PartitionArgs pa = RandomPartitionArgs(ctx, res.size());
  if (c.shuffle && (c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s)) {
    return WorkersRandomStreamed(ctx, res, pa, workers, py1e_narrow_block, checkpoints, head, cancel);
  }
  std::vector<std::vector<int64_t>> each;
  for (const PlanningWorker& w : workers) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, GetWorkerPartition(c.partition_algo, pa, w.pnode, w.prank, w.worker, head));
    KeepHead(ids, head);
    if (c.shuffle) {
      SLUICE_ASSIGN_OR_RETURN(PartialShuffle perm,
                              GetPartialShuffle(c.shuffle_algo, res.shuffle_units, ctx.C(), c.shuffle_seed,
                                                uint64_t(ctx.request.epoch), ctx.derived.shuffle_block_size, ids,
                                                cancel));
      perm.Map(ids);
      if (py1e_narrow_block != nullptr && perm.py1e_narrow_block()) *py1e_narrow_block = true;
    }
    MapSmall(ids, res);
    each.push_back(std::move(ids));
  }
  return each;
}

void KeepHead(std::vector<int64_t>& slots, int64_t head) {
  if (head < 0) return;
  int64_t kept = 0;
  size_t end = 0;
  while (end < slots.size() && kept < head) kept += slots[end++] >= 0;
  slots.resize(end);
}

Result<std::vector<int64_t>> WorkerRandom(const BatchContext& ctx, int64_t pnode, int64_t prank, int64_t worker,
                                          bool* py1e_narrow_block, const EpochCheckpoints* checkpoints) {
  const PlanningWorker one{pnode, prank, worker};
  SLUICE_ASSIGN_OR_RETURN(auto each, WorkersRandom(ctx, std::span<const PlanningWorker>(&one, 1), py1e_narrow_block,
                                                   checkpoints));
  return std::move(each[0]);
}

}  // namespace sluice::planner

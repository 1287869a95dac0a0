#include "engine/planner/plan.h"

#include <string>

#include "engine/planner/batching.h"
#include "engine/planner/mixture_plan.h"
#include "engine/planner/plan_worker.h"

namespace sluice::planner {
namespace {

// Mosaic's text as its source spells it: a string continued with backslashes
// across indented lines, so the indentation is part of it.
constexpr char kPy1eNarrowBlock[] =
    "Shuffle block size was smaller than shard size for some shards. This                  "
    "       will result in these shards not being shuffled with other shards. Set         "
    "                shuffle_block_size to a larger value for a higher quality shuffle.";

}  // namespace

Result<WorkArray> PlanEpoch(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const BatchContext ctx{request, derived};
  if (request.config.mixture) return MixtureEpoch(ctx);
  switch (request.config.batching_method) {
    case BatchingMethod::kRandom: return BatchRandom(ctx);
    case BatchingMethod::kPerStream: return BatchPerStream(ctx);
    case BatchingMethod::kStratified: return BatchStratified(ctx);
    case BatchingMethod::kDevicePerStream: return BatchDevicePerStream(ctx);
  }
  return InternalError("unknown batching method");
}

Result<std::vector<int64_t>> PlanWorker(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                                        std::optional<std::string>* shuffle_warning,
                                        const EpochCheckpoints* checkpoints) {
  if (shuffle_warning != nullptr) shuffle_warning->reset();
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const World& w = request.world;
  if (node < 0 || node >= w.num_nodes || rank < 0 || rank >= w.ranks_per_node || worker < 0 ||
      worker >= w.workers_per_rank) {
    return InvalidArgumentError("worker (node " + std::to_string(node) + ", rank " + std::to_string(rank) +
                                ", worker " + std::to_string(worker) + ") is outside the world of " +
                                std::to_string(w.num_nodes) + " x " + std::to_string(w.ranks_per_node) + " x " +
                                std::to_string(w.workers_per_rank));
  }
  // Real rank -> planning rank of its replication group.
  const int64_t g = (node * w.ranks_per_node + rank) / derived.replication;
  const int64_t pr = derived.parallel_world.ranks_per_node;
  const int64_t pnode = g / pr, prank = g % pr;
  const BatchContext ctx{request, derived};
  std::vector<int64_t> slice;
  if (request.config.mixture) {
    return MixtureWorker(ctx, pnode, prank, worker);
  } else if (request.config.batching_method == BatchingMethod::kRandom) {
    bool narrow = false;
    SLUICE_ASSIGN_OR_RETURN(slice, WorkerRandom(ctx, pnode, prank, worker, &narrow, checkpoints));
    if (narrow && shuffle_warning != nullptr) *shuffle_warning = kPy1eNarrowBlock;
  } else {
    SLUICE_ASSIGN_OR_RETURN(WorkArray work, PlanEpoch(request));
    const int64_t* begin = work.ids.data() + work.Offset(pnode, prank, worker, 0, 0);
    slice.assign(begin, begin + work.batches() * work.batch_size());
  }
  std::erase(slice, -1);
  return slice;
}

std::vector<std::vector<int64_t>> DataLoaderBatches(const WorkArray& work, int64_t node, int64_t rank) {
  const int64_t W = work.workers(), B = work.batch_size();
  std::vector<std::vector<std::vector<int64_t>>> per_worker(static_cast<size_t>(W));
  for (int64_t w = 0; w < W; ++w) {
    const int64_t* begin = work.ids.data() + work.Offset(node, rank, w, 0, 0);
    std::vector<int64_t> batch;
    for (const int64_t* p = begin; p != begin + work.batches() * B; ++p) {
      if (*p == -1) continue;
      batch.push_back(*p);
      if (int64_t(batch.size()) == B) per_worker[size_t(w)].push_back(std::move(batch)), batch.clear();
    }
    if (!batch.empty()) per_worker[size_t(w)].push_back(std::move(batch));
  }
  std::vector<std::vector<int64_t>> out;
  for (size_t round = 0;; ++round) {
    bool any = false;
    for (auto& batches : per_worker) {
      if (round < batches.size()) {
        out.push_back(std::move(batches[round]));
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

}  // namespace sluice::planner

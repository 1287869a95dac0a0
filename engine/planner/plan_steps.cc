#include "engine/planner/plan_steps.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

namespace sluice::planner {

Result<std::vector<StepBatch>> PlanSteps(const PlanRequest& q, int64_t rank, int64_t first, int64_t end) {
  const World& world = q.world;
  const int64_t num_ranks = world.num_nodes * world.ranks_per_node;
  if (first < 0 || first >= end) {
    return InvalidArgumentError("steps " + std::to_string(first) + " to " + std::to_string(end) +
                                " - 1: expected 0 <= first step < end");
  }
  if (!q.config.batch_size) return InvalidArgumentError("steps: the plan has no batch_size");
  if (rank >= num_ranks) {
    return InvalidArgumentError("steps: rank " + std::to_string(rank) + " is outside the world's " +
                                std::to_string(num_ranks) + " ranks");
  }
  std::vector<int64_t> ranks;  // ascending
  for (int64_t r = rank < 0 ? 0 : rank; r < (rank < 0 ? num_ranks : rank + 1); ++r) ranks.push_back(r);
  std::optional<EpochCheckpoints> checkpoints;
  const bool nodes = ranks.front() / world.ranks_per_node != ranks.back() / world.ranks_per_node;
  if (nodes && CheckpointsApply(q.config)) {
    SLUICE_ASSIGN_OR_RETURN(checkpoints, PlanCheckpoints(q));
  }
  std::vector<std::vector<std::vector<int64_t>>> batches(ranks.size());  // per rank: its steps in range
  int64_t steps = 0;  // the most any rank takes
  for (size_t i = 0; i < ranks.size();) {
    const int64_t node = ranks[i] / world.ranks_per_node;
    size_t j = i;
    std::vector<WorkerAt> workers;
    for (; j < ranks.size() && ranks[j] / world.ranks_per_node == node; ++j) {
      for (int64_t w = 0; w < world.workers_per_rank; ++w) {
        workers.push_back({node, ranks[j] % world.ranks_per_node, w});
      }
    }
    SLUICE_ASSIGN_OR_RETURN(auto each, PlanWorkers(q, workers, checkpoints ? &*checkpoints : nullptr));
    for (size_t k = i; k < j; ++k) {
      const auto begin = each.begin() + static_cast<ptrdiff_t>((k - i) * size_t(world.workers_per_rank));
      std::vector<std::vector<int64_t>> own(std::make_move_iterator(begin),
                                           std::make_move_iterator(begin + world.workers_per_rank));
      std::vector<std::vector<int64_t>> all = DataLoaderBatches(own, *q.config.batch_size);
      steps = std::max(steps, int64_t(all.size()));
      for (int64_t s = first; s < end && s < int64_t(all.size()); ++s) batches[k].push_back(std::move(all[size_t(s)]));
    }
    i = j;
  }
  if (first >= steps) {
    return InvalidArgumentError("steps start at step " + std::to_string(first) + ", past the last: " +
                                (ranks.size() == 1 ? "the rank takes " : "each rank takes at most ") +
                                std::to_string(steps) + " steps in epoch " + std::to_string(q.epoch) +
                                (q.sample_in_epoch ? " from sample " + std::to_string(q.sample_in_epoch) : ""));
  }
  std::vector<StepBatch> out;
  for (int64_t s = first; s < end && s < steps; ++s) {
    for (size_t k = 0; k < ranks.size(); ++k) {
      if (size_t(s - first) < batches[k].size()) out.push_back({s, ranks[k], std::move(batches[k][size_t(s - first)])});
    }
  }
  return out;
}

}  // namespace sluice::planner

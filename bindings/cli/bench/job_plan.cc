#include "bindings/cli/bench/job_plan.h"

#include <algorithm>
#include <optional>

#include "engine/dataset/streaming_dataset.h"

namespace sluice::bench {

uint64_t JobPlan::planned_samples() const {
  uint64_t n = 0;
  for (const auto& v : ids) n += v.size();
  return n;
}

uint64_t JobPlan::shards_touched() const {
  // Sorted per process and epoch, not marked in a per-shard array: a
  // process reads a few of a million shards.
  uint64_t touched = 0;
  std::vector<size_t> read;
  for (size_t p = 0; p < ids.size(); ++p) {
    size_t begin = 0;
    for (size_t end : epoch_ends[p]) {
      read.clear();
      for (size_t i = begin; i < end; ++i) read.push_back(locator->Locate(static_cast<uint64_t>(ids[p][i])).first);
      std::sort(read.begin(), read.end());
      touched += static_cast<uint64_t>(std::unique(read.begin(), read.end()) - read.begin());
      begin = end;
    }
  }
  return touched;
}

Result<JobPlan> LoadJobPlan(const BenchOptions& o) {
  JobPlan plan;
  plan.nodes = o.PlannedNodes();
  SLUICE_ASSIGN_OR_RETURN(auto view, StreamingDataset::Open(o.ForRank(0, 0)));
  if (!o.plan_only) {
    for (int64_t node = 1; node < o.nodes; ++node) {
      SLUICE_RETURN_IF_ERROR(StreamingDataset::Open(o.ForRank(node, 0)).status());
    }
  }
  plan.shards = ShardBytesOf(*view);
  plan.locator = view->sample_locator();
  plan.epoch_size = view->epoch_size();
  const int64_t W = o.workers_per_rank;
  const size_t processes = plan.nodes.size() * static_cast<size_t>(o.ranks_per_node * W);
  plan.ids.resize(processes);
  plan.epoch_ends.resize(processes);
  for (int64_t e = 0; e < o.epochs; ++e) {
    std::optional<planner::EpochCheckpoints> checkpoints;
    if (processes > 1) {
      SLUICE_ASSIGN_OR_RETURN(checkpoints, view->EpochCheckpoints(e));
    }
    size_t p = 0;
    for (int64_t node : plan.nodes) {  // a node's workers at once: they share its canonical nodes
      std::vector<planner::WorkerAt> workers;
      for (int64_t rank = 0; rank < o.ranks_per_node; ++rank) {
        for (int64_t w = 0; w < W; ++w) workers.push_back({node, rank, w});
      }
      SLUICE_ASSIGN_OR_RETURN(auto each, view->PeerWorkerIds(workers, e, W, checkpoints ? &*checkpoints : nullptr));
      for (std::vector<int64_t>& ids : each) {
        for (int64_t id : ids) {
          if (id < 0 || static_cast<uint64_t>(id) >= plan.locator->total()) {
            return InternalError("bench: the planner gave sample id " + std::to_string(id) + " of " +
                                 std::to_string(plan.locator->total()));
          }
        }
        if (plan.ids[p].empty()) {
          plan.ids[p] = std::move(ids);
        } else {
          plan.ids[p].insert(plan.ids[p].end(), ids.begin(), ids.end());
        }
        plan.epoch_ends[p].push_back(plan.ids[p].size());
        ++p;
      }
    }
  }
  return plan;
}

void DescribeJob(const BenchOptions& o, const JobPlan& plan, BenchReport* r) {
  r->remote = o.dataset.streams[0].remote;
  r->nodes = o.nodes, r->ranks_per_node = o.ranks_per_node, r->workers_per_rank = o.workers_per_rank;
  r->planned_nodes = plan.nodes;
  r->epochs = o.epochs, r->batch_size = o.dataset.batch_size(), r->step_time_s = o.step_time_s;
  r->cache_limit = o.dataset.cache_limit;
  r->link_bandwidth = o.link_bandwidth;
  r->dataset_shards = plan.shards.size();
  for (const ShardBytes& s : plan.shards) {
    r->dataset_samples += s.samples, r->dataset_stored_bytes += s.stored, r->dataset_cached_bytes += s.cached;
  }
  r->epoch_size = plan.epoch_size;
  r->planned_samples = plan.planned_samples();
  r->shards_touched = plan.shards_touched();
}

}  // namespace sluice::bench

#include "bindings/cli/bench/job_plan.h"

#include <algorithm>

#include "engine/dataset/streaming_dataset.h"

namespace sluice::bench {

uint64_t JobPlan::planned_samples() const {
  uint64_t n = 0;
  for (const auto& v : ids) n += v.size();
  return n;
}

uint64_t JobPlan::shards_touched() const {
  uint64_t touched = 0;
  std::vector<char> seen(shards.size());
  for (size_t p = 0; p < ids.size(); ++p) {
    size_t begin = 0;
    for (size_t end : epoch_ends[p]) {
      std::fill(seen.begin(), seen.end(), 0);
      for (size_t i = begin; i < end; ++i) seen[shard_of[static_cast<size_t>(ids[p][i])]] = 1;
      touched += static_cast<uint64_t>(std::count(seen.begin(), seen.end(), 1));
      begin = end;
    }
  }
  return touched;
}

Result<JobPlan> LoadJobPlan(const BenchOptions& o) {
  JobPlan plan;
  for (int64_t node = 0; node < o.nodes; ++node) {
    for (int64_t rank = 0; rank < o.ranks_per_node; ++rank) {
      SLUICE_ASSIGN_OR_RETURN(auto view, StreamingDataset::Open(o.ForRank(node, rank)));
      if (plan.shards.empty()) {
        plan.shards = ShardBytesOf(*view);
        plan.shard_of = ShardOfSample(plan.shards);
      }
      plan.epoch_size = view->epoch_size();
      for (int64_t w = 0; w < o.workers_per_rank; ++w) {
        std::vector<int64_t> all;
        std::vector<size_t> ends;
        for (int64_t e = 0; e < o.epochs; ++e) {
          SLUICE_ASSIGN_OR_RETURN(auto ids, view->WorkerIds(e, 0, w, o.workers_per_rank));
          for (int64_t id : ids) {
            if (id < 0 || static_cast<uint64_t>(id) >= plan.shard_of.size()) {
              return InternalError("bench: the planner gave sample id " + std::to_string(id) + " of " +
                                   std::to_string(plan.shard_of.size()));
            }
          }
          all.insert(all.end(), ids.begin(), ids.end());
          ends.push_back(all.size());
        }
        plan.ids.push_back(std::move(all));
        plan.epoch_ends.push_back(std::move(ends));
      }
    }
  }
  return plan;
}

void DescribeJob(const BenchOptions& o, const JobPlan& plan, BenchReport* r) {
  r->remote = o.dataset.streams[0].remote;
  r->nodes = o.nodes, r->ranks_per_node = o.ranks_per_node, r->workers_per_rank = o.workers_per_rank;
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

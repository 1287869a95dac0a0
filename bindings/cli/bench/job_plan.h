// The job's plan, from the planner alone: every simulated worker's sample
// ids for every epoch, and the shards they fall in. Opening each rank's
// view of the dataset downloads index.json into the node's cache folder,
// nothing else. Shared by the run (what it should read) and the prediction.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "bindings/cli/bench/bench_dataset.h"
#include "bindings/cli/bench/bench_options.h"
#include "bindings/cli/bench/bench_report.h"

namespace sluice::bench {

struct JobPlan {
  int64_t epoch_size = 0;           // the planner's, all ranks
  std::vector<ShardBytes> shards;   // global shards
  std::shared_ptr<const SampleLocator> locator;  // global sample id -> global shard
  std::vector<int64_t> nodes;       // the nodes planned (BenchOptions::PlannedNodes)
  // ids[p]: planned process p's ids, epoch after epoch (padding removed);
  // p = (k * ranks_per_node + rank) * workers_per_rank + worker for the
  // k-th planned node (in a run, k is the node).
  std::vector<std::vector<int64_t>> ids;
  std::vector<std::vector<size_t>> epoch_ends;  // per process: where each epoch's ids end
  uint64_t planned_samples() const;
  // Per process and epoch, the distinct shards its ids read, summed.
  uint64_t shards_touched() const;
};

// One view of the dataset plans the planned nodes, each node's workers
// together; each epoch's py1e/py1s draws are run once
// (planner::PlanCheckpoints) when more than one worker is planned. A run also opens each node's view, so that
// its processes find index.json in their node's cache folder.
// Errors: the dataset's (a bad URL, Mosaic's planning errors).
Result<JobPlan> LoadJobPlan(const BenchOptions& options);

// Fills the report's job and dataset fields (planned_samples and
// shards_touched of the planned nodes only).
void DescribeJob(const BenchOptions& options, const JobPlan& plan, BenchReport* report);

}  // namespace sluice::bench

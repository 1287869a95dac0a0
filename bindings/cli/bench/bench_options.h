// The options of `sluice bench` (and sluice_bench_run): the dataset's own
// options under Mosaic's names (remote, cache_limit, predownload, shuffle,
// shuffle_algo, shuffle_seed, batch_size, ...; see
// engine/dataset/dataset_config.h) plus the job the bench simulates.
// Plain values; the parser is a pure, thread-safe function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/dataset/dataset_config.h"

namespace sluice::bench {

struct BenchOptions {
  // Every stream's "local" is left empty here: the bench gives each
  // simulated node its own cache folder, CacheFolder(node, stream).
  DatasetOptions dataset;
  // Root of the nodes' cache folders; "" = a fresh temporary folder,
  // removed after the run (a cold cache).
  std::string cache_dir;
  int64_t nodes = 1, ranks_per_node = 1, workers_per_rank = 1;
  int64_t epochs = 1;
  // The training step each rank takes per batch (seconds); 0 = the consumer
  // takes batches as fast as they come. "consumer_rate" (samples/s per
  // rank) is the other way to say it: step_time = batch_size / rate.
  double step_time_s = 0;
  double interval_s = 0.1;  // time-series sampling period
  // --plan-only: predict from the planner, download nothing.
  bool plan_only = false;
  // --plan-only plans at most this many nodes, spread evenly over the job
  // (the first and last included; PlannedNodes), and scales the job's
  // totals from theirs: a thousand-node question costs sixteen nodes'
  // planning. A run reads, and plans, every node.
  int64_t plan_nodes = 16;
  // Per-node link bandwidth the prediction assumes (bytes/s); unset = no
  // prediction of waits.
  std::optional<uint64_t> link_bandwidth;

  int64_t processes() const { return nodes * ranks_per_node * workers_per_rank; }
  // The simulated nodes a plan covers, ascending: every node, or with
  // plan_only and more than plan_nodes nodes, node round(k (nodes - 1) /
  // (plan_nodes - 1)) for k < plan_nodes.
  std::vector<int64_t> PlannedNodes() const;
  std::string CacheFolder(int64_t node, size_t stream) const;
  // The dataset options process (node, rank) opens with.
  DatasetOptions ForRank(int64_t node, int64_t rank) const;
};

// Parses a JSON object: the bench's keys "cache_dir", "nodes",
// "ranks_per_node", "workers_per_rank", "epochs", "step_time" or
// "consumer_rate", "interval", "plan_only", "plan_nodes", "link_bandwidth" (bytes/s, or
// "1gb"-style per second); every other key is the dataset's
// (ParseDatasetOptions), except "local" and "world", which the bench sets.
// "prefetch_next_epoch" defaults to false: the bench measures whole epochs
// and an epoch it does not read would add downloads it does not count.
// Errors: kInvalidArgument naming the key and what it must be.
Result<BenchOptions> ParseBenchOptions(std::string_view json);

}  // namespace sluice::bench

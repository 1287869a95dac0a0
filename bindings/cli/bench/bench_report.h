// What a bench run measured (bench_run.h) or predicted (bench_plan.h), and
// its two renderings: JSON for scripts and a table for people.
// Plain values; the functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::bench {

// One sample of the time series, `t` seconds after the start.
struct SeriesPoint {
  double t = 0;
  uint64_t samples = 0;           // consumed so far, all processes
  uint64_t sample_bytes = 0;      // bytes of their fields
  uint64_t bytes_downloaded = 0;  // all nodes
  std::vector<uint64_t> cache_bytes;  // per node: bytes in its cache folder
};

struct NodeStats {
  uint64_t bytes_downloaded = 0;
  uint64_t shards_downloaded = 0;
  uint64_t cache_hits = 0;
  uint64_t shards_evicted = 0;
  uint64_t peak_cache_bytes = 0;  // largest cache folder seen (measured or predicted)
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct BenchReport {
  // The job.
  std::string mode;  // "run" or "plan"
  std::string remote;
  int64_t nodes = 1, ranks_per_node = 1, workers_per_rank = 1, epochs = 1, batch_size = 1;
  // The nodes per_node and SeriesPoint::cache_bytes describe, ascending: all
  // of them in a run; a plan of more than plan_nodes nodes plans that many,
  // spread over the job, and its totals (planned_samples, shards_touched,
  // samples, batches, stall_total_s, the cache counters, the series'
  // samples and bytes_downloaded) scale theirs by nodes / planned.
  std::vector<int64_t> planned_nodes;
  double step_time_s = 0;
  std::optional<uint64_t> cache_limit;
  std::optional<uint64_t> link_bandwidth;
  // The dataset.
  uint64_t dataset_samples = 0, dataset_shards = 0;
  uint64_t dataset_stored_bytes = 0;  // what a cold node downloads at most once
  uint64_t dataset_cached_bytes = 0;  // what it holds once all is cached
  int64_t epoch_size = 0;             // the planner's, all ranks
  uint64_t planned_samples = 0;       // every worker's planned ids, all epochs
  uint64_t shards_touched = 0;        // shard acquisitions the plan makes (per process, summed)
  // Measured (mode "run"); in mode "plan" the predicted counterparts below.
  double wall_s = 0;
  uint64_t samples = 0, sample_bytes = 0;
  double samples_per_s = 0, gb_per_s = 0;  // sample bytes, 1e9
  double first_sample_s = 0, first_sample_max_s = 0;  // earliest / slowest worker
  uint64_t batches = 0;
  double stall_total_s = 0;
  Percentiles stall_ms;             // per batch (see bench_run.h for the model)
  double consumer_wait_s = 0;       // the engine's consumer_wait_ns, summed
  // The engine's diagnosis (engine/dataset/diagnosis.h) of the worker that
  // waited longest, over its whole run ("" in mode "plan").
  std::string diagnosis;
  std::vector<NodeStats> per_node;
  uint64_t bytes_downloaded = 0, shards_downloaded = 0, cache_hits = 0, shards_evicted = 0;
  double cache_hit_ratio = 0;       // hits / (hits + downloads)
  double egress_ratio = 0;          // bytes downloaded per node / dataset_stored_bytes (mean)
  double cpu_s = 0, cpu_s_per_gb = 0;  // user+system of the workers, per GB of sample bytes
  uint64_t peak_rss_bytes = 0;      // the largest worker's
  // Predicted (mode "plan").
  bool consumer_waits = false;
  std::string series_unit = "s";  // of SeriesPoint::t: "s", or "step" (a plan without step_time)
  std::vector<SeriesPoint> series;
};

// p50/p90/p99 (nearest rank) and max of durations in ns, in ms.
Percentiles SpreadMs(std::vector<uint64_t> ns);

// {"mode", "job": {...}, "dataset": {...}, "throughput": {...}, "stalls": {...},
//  "cache": {..., "per_node": [...]}, "resources": {...}, "series": [...]}
// (fields documented in bindings/cli/bench/README.md).
Result<std::string> ReportJson(const BenchReport& report);

// A few aligned lines for a terminal.
std::string ReportTable(const BenchReport& report);

// The series as CSV: t,samples,sample_bytes,bytes_downloaded,cache_node0,...
std::string SeriesCsv(const BenchReport& report);

}  // namespace sluice::bench

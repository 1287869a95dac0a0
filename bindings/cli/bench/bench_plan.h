// sluice bench --plan-only: predicts, from the planner alone (index.json is
// the only download), what a run of the job would do on each node: bytes
// downloaded, hits, evictions, cache occupancy over time, and, given a link
// bandwidth, whether and how long the consumer would wait.
//
// The model (one owner; the numbers it gives are in bench_plan.cc's tests):
// - time is the consumer's step: worker w of a rank hands batch k at step
//   k * workers_per_rank + w, step_time seconds apart (with step_time 0 the
//   series counts steps, not seconds);
// - a worker asks for a sample's shard `predownload` samples before it reads
//   it, and asks again only when the shard was not among the last
//   `predownload` samples it read (the prefetcher's window);
// - a node's cache is an LRU of raw shard bytes under cache_limit; a shard
//   asked for and not yet read is pinned; an ask that finds no unpinned
//   room waits for the read; a missing shard is downloaded, its stored
//   (compressed) bytes counted as egress;
// - downloads go one after another over the node's link at link_bandwidth;
//   a batch is late by how much its last shard arrived after it was due, and
//   lateness is not carried forward (the total is an upper bound); a
//   worker's first batch is the start-up (first_sample_s, the earliest
//   worker's; first_sample_max_s, the slowest's), not a stall.
// Without cache_limit the predicted egress is exact: each shard the node's
// plan reads, once. With one it is a lower bound: the engine's prefetches
// race for room and some are evicted before they are read, which the model
// does not see. On tests/data's fixed_size_only, cache_limit 2-3 shards, runs
// downloaded 1.0 to 2.1 times the prediction (cli_bench_plan_test.cc holds
// one configuration to [1, 3]).
#pragma once

#include "base/status.h"
#include "bindings/cli/bench/bench_options.h"
#include "bindings/cli/bench/bench_report.h"

namespace sluice::bench {

// mode "plan"; the measured-only fields (throughput but samples and the
// first sample, resources, the engine's consumer_wait_s) are 0.
Result<BenchReport> PredictBench(const BenchOptions& options);

}  // namespace sluice::bench

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
//   it, unless the shard was among the last `predownload` samples it read
//   (the prefetcher's window); every sample's read touches its shard, and
//   fetches it again when it was evicted since;
// - a node's cache is an LRU of raw shard bytes under cache_limit; a shard
//   asked for and not yet read is pinned against other asks (an ask that
//   finds no unpinned room waits for the read), but a read evicts whatever
//   it must; a fetched shard's stored (compressed) bytes count as egress;
// - downloads go one after another over the node's link at link_bandwidth;
//   a batch is late by how much its last shard arrived after it was due, and
//   lateness is not carried forward (the total is an upper bound); a
//   worker's first batch is the start-up (first_sample_s, the earliest
//   worker's; first_sample_max_s, the slowest's), not a stall.
// Without cache_limit the predicted egress is exact: each shard the node's
// plan reads, once. With one it is an estimate: on tests/data's
// fixed_size_only with room for 2-8 shards, runs downloaded 0.64 to 1.38
// times the prediction, and 1.02 times on a 21-shard dataset whose
// prefetch window spans every shard (Mosaic's default shuffle block) with
// room for 10: 50 times the dataset, which the model foresees.
// cli_bench_plan_test.cc holds one configuration to [0.5, 2].
// Memory: one record per planned sample of a node.
#pragma once

#include "base/status.h"
#include "bindings/cli/bench/bench_options.h"
#include "bindings/cli/bench/bench_report.h"

namespace sluice::bench {

// mode "plan"; the measured-only fields (throughput but samples and the
// first sample, resources, the engine's consumer_wait_s) are 0.
Result<BenchReport> PredictBench(const BenchOptions& options);

}  // namespace sluice::bench

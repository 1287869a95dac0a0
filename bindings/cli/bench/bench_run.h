// Runs a bench: streams `epochs` epochs of a dataset through one cache folder
// per simulated node, with every (node, rank, worker) as a forked process
// (as PyTorch DataLoader workers are), and measures it.
//
// The consumer model: each worker hands its rank a batch of batch_size
// samples at a time, one batch in flight. The rank takes a step of
// step_time per batch and round-robins its workers, so a worker's next batch
// is due step_time * workers_per_rank after the previous one was taken (the
// first one at the start). A stall is how long a batch was ready after it was
// due; with step_time 0 it is the time to assemble the batch.
//
// Not thread-safe with respect to fork: call it from a process whose other
// threads hold no lock the children need (the engine's own state is created
// in the children).
#pragma once

#include "base/status.h"
#include "bindings/cli/bench/bench_options.h"
#include "bindings/cli/bench/bench_report.h"

namespace sluice::bench {

// Errors: the dataset's (bad URL, planner errors) from opening it in this
// process; a worker's error, with its code, as "process P (node N, rank R, worker W): ...".
// Creates cache_dir's node folders; removes a temporary cache_dir.
Result<BenchReport> RunBench(const BenchOptions& options);

}  // namespace sluice::bench

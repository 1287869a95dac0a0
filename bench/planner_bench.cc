// Epoch planning at scale: 10M and 100M samples in 10k shards, 64 canonical
// nodes, 8 nodes x 8 ranks x 8 workers, py1e. Measures the whole array the
// local leader builds (Mosaic's generate_work: 1.4 s for 10M, 15.2 s and
// 3.4 GB peak for 100M) and one worker's plan alone.
//
// Peak memory: each case is also run once in a forked child and the child's
// peak resident set (getrusage via wait4) is reported as peak_rss_mb, so the
// figure belongs to that plan only. CPU time is the whole process (the
// planner uses a second thread for big epochs); on a shared machine it is the
// steadier figure.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "engine/planner/plan.h"

namespace sluice::planner {
namespace {

PlanRequest Request(int64_t samples) {
  PlanRequest q;
  StreamSpec s;
  const int64_t shards = 10000;
  s.shard_sizes.assign(size_t(shards), samples / shards);
  q.streams.push_back(std::move(s));
  q.config.num_canonical_nodes = 64;
  q.config.batch_size = 32;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.world = World{8, 8, 8, {}, {}, {}};
  q.epoch = 1;
  return q;
}

// Runs fn once in a child process; returns the child's peak RSS in MiB.
template <typename Fn>
double ChildPeakRssMb(Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    const bool ok = fn();
    _exit(ok ? 0 : 1);
  }
  if (pid < 0) return -1;
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return double(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void BM_WholeArray(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0));
  for (auto _ : state) {
    auto work = PlanEpoch(q);
    if (!work.ok()) {
      state.SkipWithError(work.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(work->ids.data());
  }
  state.counters["peak_rss_mb"] = ChildPeakRssMb([&] { return PlanEpoch(q).ok(); });
  state.counters["samples"] = double(state.range(0));
}

void BM_OneWorker(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0));
  size_t n = 0;
  for (auto _ : state) {
    auto ids = PlanWorker(q, 3, 5, 7);
    if (!ids.ok()) {
      state.SkipWithError(ids.status().ToString().c_str());
      return;
    }
    n = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.counters["peak_rss_mb"] = ChildPeakRssMb([&] { return PlanWorker(q, 3, 5, 7).ok(); });
  state.counters["worker_ids"] = double(n);
}

BENCHMARK(BM_WholeArray)->Arg(10'000'000)->Arg(100'000'000)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_OneWorker)->Arg(10'000'000)->Arg(100'000'000)->Unit(benchmark::kMillisecond)->Iterations(1)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace sluice::planner

BENCHMARK_MAIN();

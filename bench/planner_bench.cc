// Epoch planning at scale: 10M and 100M samples in 10k shards, 1B in 100k
// and 4B in 1M (issue 38's pretraining set), 64 canonical nodes, 8 nodes x
// 8 ranks x 8 workers, py1e, epoch 1. Measures the whole array the local
// leader builds (Mosaic's generate_work: shuffle + partition + remap; 10M
// and 100M only: 4B would be 32 GB) and one worker's plan alone, against
// Mosaic's numpy planning measured on this kind of machine for exactly
// these inputs: 1.4 s for 10M, 15.2 s and 3.4 GB peak for 100M.
//
// OneWorker/which:0 is node 3, rank 5, worker 7: it reads canonical node
// 43 of 64, so the draws of 43 nodes come before its own.
// which:1 is node 7, rank 7, worker 7, of the last canonical node: the
// planning floor's worst case (every earlier node's shuffle draws replayed,
// engine/planner/README.md). own_ids is the worker's share; budget_mb is
// issue 38's memory target for it, 8 bytes per own id + 64 MiB.
// Checkpoints is that floor paid once per epoch (PlanCheckpoints), and
// OneWorkerWithCheckpoints a worker's plan from them.
// SharedCheckpoints is a worker of a node whose first process published
// the epoch's checkpoints (engine/dataset/node_checkpoints.h): the file's
// bytes checked and read back (CheckpointsKey of the request included),
// then the plan from them; present:0 is the same worker without them.
// Resume is issue 38's elastic case at 4B: present:0/1 as above, resume:0
// a fresh plan of worker 7/7/7 of the 8 x 8 x 8 world, resume:1 worker
// 3/7/7 of 4 x 8 x 8 nodes resumed at the epoch's middle (initial physical
// nodes 8: the same 64 canonical nodes, the relaxed partition).
//
// Each case is timed once in this process (wall, and the process's user and
// system CPU time: system time is mostly the kernel zeroing the fresh pages
// of the result, which no planner avoids) and
// run once more in a forked child, whose peak resident set (getrusage) and
// growth over its resident set at fork (rss_delta_mb) are the plan's memory.
// WholeArray/threads:1 plans on the calling thread only; threads:0 lets the
// planner add its one helper thread (same plan, see PlanRequest::threads).
// vs_mosaic = Mosaic's whole-node seconds / our wall seconds. Each case runs
// three times and reports the median (and mean, stddev): the first large
// allocation of a process on this VM can cost seconds of kernel time that
// later ones do not (pages the host has not backed yet).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "engine/planner/checkpoints_file.h"
#include "engine/planner/mixture_checkpoints.h"
#include "engine/planner/mixture_schedule.h"
#include "engine/planner/plan.h"

namespace sluice::planner {
namespace {

PlanRequest Request(int64_t samples, int threads) {
  PlanRequest q;
  StreamSpec s;
  const int64_t shards = samples <= 100'000'000 ? 10'000 : samples <= 1'000'000'000 ? 100'000 : 1'000'000;
  s.shard_sizes.assign(size_t(shards), samples / shards);
  q.streams.push_back(std::move(s));
  q.config.num_canonical_nodes = 64;
  q.config.batch_size = 32;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.world = World{8, 8, 8, {}, {}, {}};
  q.epoch = 1;
  q.threads = threads;
  return q;
}

double MosaicSeconds(int64_t samples) {
  return samples >= 1'000'000'000 ? -1 : samples >= 100'000'000 ? 15.2 : 1.4;  // not measured beyond 100M
}

double ResidentMb() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0) : -1;
}

// User and system (kernel: page faults, zeroing fresh pages) CPU seconds
// of the whole process so far.
struct CpuSeconds {
  double user = 0, sys = 0;
};
CpuSeconds ProcessCpu(int who = RUSAGE_SELF) {
  struct rusage u {};
  getrusage(who, &u);
  auto sec = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
  return {sec(u.ru_utime), sec(u.ru_stime)};
}

struct ChildMemory {
  double peak_mb = -1, delta_mb = -1;
};

// Runs fn once in a child process; its peak RSS and the growth over its RSS
// at the start, in MiB (the child reports the baseline through its exit
// path: the pipe carries it back).
template <typename Fn>
ChildMemory ChildPeakRss(Fn fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const double before = ResidentMb();
    const bool ok = fn();
    if (write(fds[1], &before, sizeof before) != sizeof before) _exit(1);
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  double before = -1;
  if (pid < 0 || read(fds[0], &before, sizeof before) != sizeof before) before = -1;
  close(fds[0]);
  if (pid < 0) return {};
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  const double peak = double(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  return {peak, before < 0 ? -1 : peak - before};
}

// `vs_mosaic`: whether Mosaic's figure (MosaicSeconds: its whole-node plan
// of the 8 x 8 x 8 world) is the same job; not for one process alone.
template <typename Plan>
void Measure(benchmark::State& state, Plan plan, bool vs_mosaic = true) {
  const int64_t samples = state.range(0);
  double wall = 0, caller = 0;
  CpuSeconds cpu;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const CpuSeconds c0 = ProcessCpu(), t0_cpu = ProcessCpu(RUSAGE_THREAD);
    if (!plan()) {
      state.SkipWithError("planning failed");
      return;
    }
    const CpuSeconds c1 = ProcessCpu(), t1_cpu = ProcessCpu(RUSAGE_THREAD);
    cpu = {c1.user - c0.user, c1.sys - c0.sys};
    caller = (t1_cpu.user + t1_cpu.sys) - (t0_cpu.user + t0_cpu.sys);
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const ChildMemory mem = ChildPeakRss(plan);
  state.counters["wall_s"] = wall;
  state.counters["user_s"] = cpu.user;
  state.counters["sys_s"] = cpu.sys;
  state.counters["cpu_s"] = cpu.user + cpu.sys;
  // The calling thread's share: on an idle machine the wall time of a plan
  // whose helper threads keep up with it (the checkpoints' word maker).
  state.counters["caller_cpu_s"] = caller;
  if (vs_mosaic && MosaicSeconds(samples) > 0) {
    state.counters["vs_mosaic"] = MosaicSeconds(samples) / wall;
    // On a loaded machine wall time includes waiting for a core; CPU time
    // (user + sys, all threads) is the load-independent figure, and for
    // threads:1 and OneWorker it is the single-thread time.
    state.counters["vs_mosaic_cpu"] = MosaicSeconds(samples) / (cpu.user + cpu.sys);
  }
  state.counters["peak_rss_mb"] = mem.peak_mb;
  state.counters["rss_delta_mb"] = mem.delta_mb;
}

void BM_WholeArray(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0), int(state.range(1)));
  Measure(state, [&] {
    auto work = PlanEpoch(q);
    if (work.ok()) benchmark::DoNotOptimize(work->ids.data());
    return work.ok();
  });
}

void BM_OneWorker(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0), 1);
  const int64_t who = state.range(1) == 0 ? 0 : 1;
  const int64_t node = who ? 7 : 3, rank = who ? 7 : 5, worker = 7;
  size_t n = 0;
  Measure(state, [&] {
    auto ids = PlanWorker(q, node, rank, worker);
    if (ids.ok()) {
      n = ids->size();
      benchmark::DoNotOptimize(ids->data());
    }
    return ids.ok();
  });
  state.counters["own_ids"] = double(n);
  state.counters["budget_mb"] = (8.0 * double(n)) / (1024.0 * 1024.0) + 64.0;
}

// The epoch's checkpoints (PlanCheckpoints, once per epoch and node), then
// a worker's plan from them: its own canonical node's cost alone.
void BM_Checkpoints(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0), 1);
  Measure(state, [&] { return PlanCheckpoints(q).ok(); });
}

void BM_OneWorkerWithCheckpoints(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0), 1);
  auto checkpoints = PlanCheckpoints(q);
  if (!checkpoints.ok()) {
    state.SkipWithError("checkpoints failed");
    return;
  }
  const int64_t who = state.range(1) == 0 ? 0 : 1;
  size_t n = 0;
  Measure(state, [&] {
    auto ids = PlanWorker(q, who ? 7 : 3, who ? 7 : 5, 7, nullptr, &*checkpoints);
    if (ids.ok()) {
      n = ids->size();
      benchmark::DoNotOptimize(ids->data());
    }
    return ids.ok();
  });
  state.counters["own_ids"] = double(n);
  state.counters["budget_mb"] = (8.0 * double(n)) / (1024.0 * 1024.0) + 64.0;
}

// One process alone (1 node, 1 rank, 1 worker, one canonical node: py1e's
// defaults there, so the shuffle block is larger than the epoch and the
// whole epoch is one sorting window): what a single-GPU job plans before
// its first sample. `samples` in `shards` equal shards: 500k in 8 is the
// speed issue's workload A in 64 MiB shards. shuffle 0: in order. head k:
// PlanWorkerHead's first k ids instead of the whole plan.
void BM_OneProcess(benchmark::State& state) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes.assign(size_t(state.range(1)), state.range(0) / state.range(1));
  q.streams.push_back(std::move(s));
  q.config.num_canonical_nodes = 1;
  q.config.batch_size = 16;
  q.config.shuffle = state.range(2) != 0;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.config.shuffle_seed = 17;
  q.world = World{1, 1, 1, {}, {}, {}};
  q.threads = 1;
  Measure(state, [&] {
    if (state.range(3) != 0) {
      // What a cold pass plans before its first sample (PlanWorkerHead).
      auto head = PlanWorkerHead(q, 0, 0, 0, state.range(3));
      if (head.ok()) benchmark::DoNotOptimize(head->ids.data());
      return head.ok();
    }
    auto ids = PlanWorker(q, 0, 0, 0);
    if (ids.ok()) benchmark::DoNotOptimize(ids->data());
    return ids.ok();
  }, /*vs_mosaic=*/false);
}

// One process reading a whole pretraining epoch (1 x 1 x 1, batch 32;
// `samples` in the shards of Request): algo 0 is py1e with its default of
// one canonical node, 1 py1s with its default of 64 (read interleaved).
// windows 1 is PlanWorkerWindows (windows of 2^20 ids, each summed and
// dropped), 0 PlanWorker's whole plan (8 bytes an id; at 4B it fails before
// allocating: more than this machine holds).
void BM_OneProcessWindows(benchmark::State& state) {
  PlanRequest q = Request(state.range(0), 1);
  q.config.num_canonical_nodes.reset();
  if (state.range(2) == 1) q.config.shuffle_algo = ShuffleAlgo::kPy1s;
  q.world = World{1, 1, 1, {}, {}, {}};
  Measure(state, [&] {
    if (state.range(1) == 0) {
      auto ids = PlanWorker(q, 0, 0, 0);
      if (!ids.ok()) std::fprintf(stderr, "%s\n", ids.status().ToString().c_str());
      if (ids.ok()) benchmark::DoNotOptimize(ids->data());
      return ids.ok();
    }
    int64_t sum = 0;
    auto done = PlanWorkerWindows(q, 0, 0, 0, int64_t{1} << 20, [&](std::span<const int64_t> ids) {
      for (int64_t id : ids) sum += id;
      return Status::Ok();
    });
    benchmark::DoNotOptimize(sum);
    return done.ok() && *done;
  }, /*vs_mosaic=*/false);
}

// Worker 7/7/7 of the 8 x 8 x 8 world (global rank 63, worker 7), batch 32:
// algo 0 is py1e over Request's 64 canonical nodes (the worker reads its
// node's 8, interleaved), 1 py1s with its default of 64 a node (512: it
// reads 64). windows 1 is PlanWorkerWindows (windows of 2^20 ids, summed and
// dropped; reported in `windowed`), 0 PlanWorker's plan (what
// PlanWorkerWindows did before it windowed several canonical nodes).
void BM_WorkerWindows(benchmark::State& state) {
  PlanRequest q = Request(state.range(0), 1);
  if (state.range(1) == 1) {
    q.config.shuffle_algo = ShuffleAlgo::kPy1s;
    q.config.num_canonical_nodes.reset();
  }
  bool windowed = false;
  Measure(state, [&] {
    if (state.range(2) == 0) {
      auto ids = PlanWorker(q, 7, 7, 7);
      if (ids.ok()) benchmark::DoNotOptimize(ids->data());
      return ids.ok();
    }
    int64_t sum = 0;
    auto done = PlanWorkerWindows(q, 7, 7, 7, int64_t{1} << 20, [&](std::span<const int64_t> ids) {
      for (int64_t id : ids) sum += id;
      return Status::Ok();
    });
    benchmark::DoNotOptimize(sum);
    windowed = done.ok() && *done;
    return done.ok();
  }, /*vs_mosaic=*/false);
  state.counters["windowed"] = windowed;
}

// Mixture schedule against fixed proportions: three streams (60/30/10% of
// `samples`, shards of 1000), epoch_size = samples, 64 canonical nodes,
// 8 x 8 x 8 world, py1e. mode 0: proportions 0.7/0.2/0.1 (Mosaic's
// resampling); 1: the schedule (0: 0.7/0.2/0.1, samples/2: 0.5/0.3/0.2),
// step; 2: the same, linear. whole 1: PlanEpoch; 0: worker 7/7/7's plan.
// resume 1: the epoch resumed at 90% of it (sample_in_epoch). checkpoints
// 0: the process keeps no sequencer checkpoints (dropped before each plan,
// so the plan walks the sequencer from 0); 1: they were kept by a plan of
// the same schedule before (another worker's, or the epoch before).
PlanRequest MixtureRequest(int64_t samples, int64_t mode) {
  PlanRequest q = Request(samples, 1);
  q.streams.clear();
  for (double part : {0.6, 0.3, 0.1}) {
    StreamSpec s;
    s.shard_sizes.assign(size_t(double(samples) * part / 1000), 1000);
    q.streams.push_back(std::move(s));
  }
  q.config.epoch_size = samples;
  if (mode == 0) {
    q.streams[0].weight.proportion = 0.7;
    q.streams[1].weight.proportion = 0.2;
    q.streams[2].weight.proportion = 0.1;
  } else {
    q.config.mixture = MixtureSchedule{{{0, {0.7, 0.2, 0.1}}, {samples / 2, {0.5, 0.3, 0.2}}},
                                       mode == 1 ? MixtureInterpolation::kStep : MixtureInterpolation::kLinear};
  }
  return q;
}

void BM_Mixture(benchmark::State& state) {
  PlanRequest q = MixtureRequest(state.range(0), state.range(1));
  if (state.range(3) == 1) q.sample_in_epoch = state.range(0) / 10 * 9;
  const bool whole = state.range(2) == 1, keep = state.range(4) == 1;
  const auto plan = [&] {
    if (whole) {
      auto work = PlanEpoch(q);
      if (work.ok()) benchmark::DoNotOptimize(work->ids.data());
      return work.ok();
    }
    auto ids = PlanWorker(q, 7, 7, 7);
    if (ids.ok()) benchmark::DoNotOptimize(ids->data());
    return ids.ok();
  };
  DropMixtureCheckpoints();
  if (keep) {
    // Another worker's plan of the whole epoch keeps them.
    PlanRequest other = q;
    other.sample_in_epoch = 0;
    if (!PlanWorker(other, 0, 0, 0).ok()) state.SkipWithError("planning failed");
  }
  Measure(state, [&] {
    if (!keep) DropMixtureCheckpoints();
    return plan();
  });
}

// The sequencer alone: 400,000 positions of MixtureSequencer::Next (the
// positions of bench/python/mixture_bench.py's default epoch) over
// `streams` streams, weights 1..n at 0 and n..1 at 200,000 (shape 0: the
// first point alone, constant; 1: step; 2: linear), rule 0 kDeficit,
// 1 kTijdeman. ns_per_position is the CPU time over the positions.
void BM_MixtureSequence(benchmark::State& state) {
  const int64_t streams = state.range(0), positions = 400'000;
  MixtureSchedule s;
  std::vector<double> up, down;
  for (int64_t i = 0; i < streams; ++i) {
    up.push_back(double(i + 1));
    down.push_back(double(streams - i));
  }
  s.points.push_back({0, up});
  if (state.range(1) > 0) s.points.push_back({positions / 2, down});
  s.interpolation = state.range(1) == 2 ? MixtureInterpolation::kLinear : MixtureInterpolation::kStep;
  s.rule = state.range(2) == 1 ? MixtureRule::kTijdeman : MixtureRule::kDeficit;
  auto q = QuantizeMixture(s, streams);
  if (!q.ok()) {
    state.SkipWithError(q.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    MixtureSequencer seq(*q);
    int64_t sum = 0;
    for (int64_t t = 0; t < positions; ++t) sum += seq.Next();
    benchmark::DoNotOptimize(sum);
  }
  state.counters["ns_per_position"] =
      benchmark::Counter(double(positions) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}

BENCHMARK(BM_WholeArray)
    ->ArgNames({"samples", "threads"})
    ->ArgsProduct({{10'000'000, 100'000'000}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_OneWorker)
    ->ArgNames({"samples", "which"})
    ->ArgsProduct({{10'000'000, 100'000'000, 1'000'000'000, 4'000'000'000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

BENCHMARK(BM_OneProcess)
    ->ArgNames({"samples", "shards", "shuffle", "head"})
    ->ArgsProduct({{500'000}, {8}, {0, 1}, {0, 1}})
    ->Args({8'000, 32, 1, 0})
    ->Args({8'000, 32, 1, 1})
    ->Args({10'000'000, 160, 1, 0})
    ->Args({10'000'000, 160, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

BENCHMARK(BM_OneProcessWindows)
    ->ArgNames({"samples", "windows", "algo"})
    ->ArgsProduct({{100'000'000, 1'000'000'000, 4'000'000'000}, {0, 1}, {0}})
    ->Args({100'000'000, 0, 1})
    ->Args({100'000'000, 1, 1})
    ->Args({1'000'000'000, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(1)
    ->UseRealTime();

BENCHMARK(BM_WorkerWindows)
    ->ArgNames({"samples", "algo", "windows"})
    ->ArgsProduct({{100'000'000, 1'000'000'000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(1)
    ->UseRealTime();

BENCHMARK(BM_Mixture)
    ->ArgNames({"samples", "mode", "whole", "resume", "checkpoints"})
    ->ArgsProduct({{10'000'000}, {0, 1, 2}, {0, 1}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

BENCHMARK(BM_MixtureSequence)
    ->ArgNames({"streams", "shape", "rule"})
    ->ArgsProduct({{2, 3, 8, 12}, {0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// The file's bytes as the node's first process writes them.
std::string CheckpointsBytes(const PlanRequest& q, bool* ok) {
  auto k = PlanCheckpoints(q);
  auto key = CheckpointsKey(q);
  *ok = k.ok() && key.ok();
  return *ok ? SerializeCheckpoints(*k, *key) : std::string();
}

// A worker's plan with the node's checkpoints read back from `bytes`
// (when non-empty), or alone.
bool PlanShared(const PlanRequest& q, const std::string& bytes, int64_t node, int64_t rank, int64_t worker,
                size_t* n) {
  std::optional<EpochCheckpoints> k;
  if (!bytes.empty()) {
    auto key = CheckpointsKey(q);
    if (!key.ok()) return false;
    auto read = CheckpointsFromBytes(bytes, *key, "checkpoints");
    if (!read.ok()) return false;
    k = std::move(*read);
  }
  auto ids = PlanWorker(q, node, rank, worker, nullptr, k ? &*k : nullptr);
  if (!ids.ok()) return false;
  *n = ids->size();
  benchmark::DoNotOptimize(ids->data());
  return true;
}

void BM_SharedCheckpoints(benchmark::State& state) {
  const PlanRequest q = Request(state.range(0), 1);
  bool ok = true;
  const std::string bytes = state.range(1) ? CheckpointsBytes(q, &ok) : std::string();
  if (!ok) {
    state.SkipWithError("checkpoints failed");
    return;
  }
  size_t n = 0;
  Measure(state, [&] { return PlanShared(q, bytes, 7, 7, 7, &n); }, false);
  state.counters["own_ids"] = double(n);
}

void BM_Resume(benchmark::State& state) {
  PlanRequest q = Request(state.range(0), 1);
  const bool resume = state.range(2) != 0;
  bool ok = true;
  const std::string bytes = state.range(1) ? CheckpointsBytes(q, &ok) : std::string();
  if (!ok) {
    state.SkipWithError("checkpoints failed");
    return;
  }
  int64_t node = 7;
  if (resume) {
    q.world.num_nodes = 4;
    q.config.initial_physical_nodes = 8;
    const int64_t global_batch = 4 * 8 * *q.config.batch_size;
    q.sample_in_epoch = state.range(0) / 2 / global_batch * global_batch;
    node = 3;
  }
  size_t n = 0;
  Measure(state, [&] { return PlanShared(q, bytes, node, 7, 7, &n); }, false);
  state.counters["own_ids"] = double(n);
}

BENCHMARK(BM_SharedCheckpoints)
    ->ArgNames({"samples", "present"})
    ->ArgsProduct({{1'000'000'000, 4'000'000'000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_Resume)
    ->ArgNames({"samples", "present", "resume"})
    ->ArgsProduct({{4'000'000'000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

BENCHMARK(BM_Checkpoints)
    ->ArgNames({"samples"})
    ->Arg(1'000'000'000)
    ->Arg(4'000'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_OneWorkerWithCheckpoints)
    ->ArgNames({"samples", "which"})
    ->ArgsProduct({{100'000'000, 1'000'000'000, 4'000'000'000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

}  // namespace
}  // namespace sluice::planner

BENCHMARK_MAIN();

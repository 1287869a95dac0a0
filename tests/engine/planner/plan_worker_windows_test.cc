// PlanWorkerWindows (plan_worker_windows.cc) against PlanWorker: on a sweep
// of fresh configurations (one-process worlds and others, py1e, py1s and
// unshuffled, canonical node counts, block sizes, seeds, epochs, several
// resampled streams, mid-epoch resumption, orig and relaxed, window sizes
// from one id up) the windows, joined, are PlanWorker's ids exactly and
// its shuffle warning; no window holds more than asked; every one of them
// is planned in windows (true): one canonical node or several read
// interleaved, in part order or not, padding that wraps to the epoch's
// start; the other shuffles, and a shuffle block whose readers would hold
// more than the whole plan, are planned whole (false); a sink's error
// stops planning and is returned. A plan too large for the
// process fails before it is made, saying how many samples and bytes it
// would hold and what to do instead (CheckPlanMemory).
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "engine/planner/plan.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

class Draw {
 public:
  explicit Draw(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }

 private:
  std::mt19937_64 gen_;
};

PlanRequest FreshWindowedRequest(Draw& rnd, bool one_process) {
  PlanRequest q;
  const int64_t streams = rnd.Int(1, 3);
  const int64_t big = rnd.Int(0, 2);
  for (int64_t s = 0; s < streams; ++s) {
    StreamSpec spec;
    const int64_t shards = rnd.Int(1, 12);
    for (int64_t i = 0; i < shards; ++i) spec.shard_sizes.push_back(rnd.Int(i == 0 ? 1 : 0, 30 * (big * 9 + 1)));
    if (streams > 1 && rnd.Int(0, 2) == 0) spec.weight.repeat = 0.5 + double(rnd.Int(0, 4)) * 0.25;
    q.streams.push_back(spec);
  }
  // Several canonical nodes a worker too: up to 24 read interleaved.
  const int64_t C = one_process && rnd.Int(0, 2) != 0 ? 1 : rnd.Int(0, 3) == 0 ? rnd.Int(7, 24) : rnd.Int(1, 6);
  int64_t n = 0;
  for (auto& s : q.streams)
    for (int64_t z : s.shard_sizes) n += z;
  if (n < 2 * C) q.streams[0].shard_sizes[0] += 2 * C - n;
  if (rnd.Int(0, 1) == 0 || C != 1) q.config.num_canonical_nodes = C;  // else py1e's default: one a node
  const int64_t algo = rnd.Int(0, 5);
  q.config.shuffle = algo != 0;
  q.config.shuffle_algo = algo == 1 ? ShuffleAlgo::kPy1s : ShuffleAlgo::kPy1e;
  if (q.config.shuffle_algo == ShuffleAlgo::kPy1s) q.config.num_canonical_nodes = C;
  q.config.shuffle_seed = uint64_t(rnd.Int(0, 1 << 20));
  q.config.shuffle_block_size = rnd.Int(2, rnd.Int(0, 1) ? 100 : 3000);
  q.config.partition_algo = rnd.Int(0, 1) ? PartitionAlgo::kOrig : PartitionAlgo::kRelaxed;
  if (!one_process) {
    q.world.num_nodes = rnd.Int(1, 3);
    q.world.ranks_per_node = rnd.Int(1, 3);
    q.world.workers_per_rank = rnd.Int(1, 3);
    if (C % q.world.num_nodes != 0 && q.world.num_nodes % C != 0) q.world.num_nodes = 1;
  }
  q.config.batch_size = rnd.Int(1, 6);
  q.epoch = rnd.Int(0, 3);
  if (rnd.Int(0, 3) == 0) q.sample_in_epoch = rnd.Int(0, n / 2);
  return q;
}

struct Joined {
  std::vector<int64_t> ids;
  size_t widest = 0, windows = 0;
};

TEST(PlanWorkerWindowsTest, EqualsPlanWorkerOnFreshConfigurations) {
  Draw rnd(38);
  int windowed = 0, several = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const bool one_process = iter % 2 == 0;
    const PlanRequest q = FreshWindowedRequest(rnd, one_process);
    const int64_t node = rnd.Int(0, q.world.num_nodes - 1), rank = rnd.Int(0, q.world.ranks_per_node - 1),
                  worker = rnd.Int(0, q.world.workers_per_rank - 1);
    std::optional<std::string> expect_warning;
    auto expect = PlanWorker(q, node, rank, worker, &expect_warning);
    const int64_t window = rnd.Int(0, 1) ? rnd.Int(1, 8) : rnd.Int(1, 5000);
    Joined got;
    std::optional<std::string> warning;
    auto done = PlanWorkerWindows(
        q, node, rank, worker, window,
        [&](std::span<const int64_t> ids) {
          got.ids.insert(got.ids.end(), ids.begin(), ids.end());
          got.widest = std::max(got.widest, ids.size());
          ++got.windows;
          return Status::Ok();
        },
        &warning);
    ASSERT_EQ(done.ok(), expect.ok()) << "iter " << iter << ": " << done.status().ToString() << " / "
                                      << expect.status().ToString();
    if (!expect.ok()) {
      EXPECT_EQ(done.status().ToString(), expect.status().ToString()) << "iter " << iter;
      continue;
    }
    ASSERT_EQ(got.ids, *expect) << "iter " << iter;
    EXPECT_EQ(warning, expect_warning) << "iter " << iter;
    EXPECT_LE(got.widest, size_t(window)) << "iter " << iter;
    EXPECT_TRUE(*done) << "iter " << iter << ": py1e, py1s or unshuffled, any world, in windows";
    windowed += *done;
    several += q.config.num_canonical_nodes.value_or(1) > q.world.num_nodes;
  }
  EXPECT_EQ(windowed, 1500);
  // Workers of several canonical nodes were a good share of them.
  EXPECT_GT(several, 400);
}

PlanRequest OneProcessEpoch(ShuffleAlgo algo) {
  PlanRequest q;
  q.streams.push_back({{1000, 900, 1100, 1000}, {}});
  q.config.batch_size = 8;
  q.config.shuffle = true;
  q.config.shuffle_algo = algo;
  q.config.shuffle_block_size = 600;
  return q;
}

TEST(PlanWorkerWindowsTest, OtherShufflesArePlannedWhole) {
  for (ShuffleAlgo algo : {ShuffleAlgo::kPy1br, ShuffleAlgo::kPy1b, ShuffleAlgo::kPy2s, ShuffleAlgo::kNaive}) {
    const PlanRequest q = OneProcessEpoch(algo);
    std::vector<int64_t> got;
    auto done = PlanWorkerWindows(q, 0, 0, 0, 100, [&](std::span<const int64_t> ids) {
      got.insert(got.end(), ids.begin(), ids.end());
      return Status::Ok();
    });
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_FALSE(*done);
    EXPECT_EQ(got, *PlanWorker(q, 0, 0, 0));
  }
}

// PlanWorker with a cancel flag: unset, the same plan as without; set at
// its k-th check (a worker's partition, a shuffle's start, a canonical
// node), it stops there with kCancelled and makes no later check. Every
// shuffle, whole (py1b, py1br, py2s, naive) or streamed (py1e, py1s).
TEST(PlanWorkerWindowsTest, AWholePlanStopsAtTheCheckWhereItsFlagIsSet) {
  for (ShuffleAlgo algo : {ShuffleAlgo::kPy1br, ShuffleAlgo::kPy1b, ShuffleAlgo::kPy2s, ShuffleAlgo::kNaive,
                           ShuffleAlgo::kPy1e, ShuffleAlgo::kPy1s}) {
    PlanRequest q = OneProcessEpoch(algo);
    q.config.num_canonical_nodes = 4;
    std::atomic<bool> flag{false};
    int checks = 0;
    int64_t stop_at = -1;
    SetPlanCancelCheckHookForTesting([&](const std::atomic<bool>* cancel) {
      if (cancel != &flag) return;
      if (++checks == stop_at) flag = true;
    });
    auto whole = PlanWorker(q, 0, 0, 0, nullptr, nullptr, &flag);
    const int all = checks;
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(*whole, *PlanWorker(q, 0, 0, 0)) << ShuffleAlgoName(algo);
    EXPECT_GE(all, 3) << ShuffleAlgoName(algo);
    checks = 0;
    stop_at = all - 1;
    auto stopped = PlanWorker(q, 0, 0, 0, nullptr, nullptr, &flag);
    SetPlanCancelCheckHookForTesting(nullptr);
    EXPECT_EQ(stopped.status().code(), StatusCode::kCancelled) << ShuffleAlgoName(algo);
    EXPECT_EQ(stopped.status().message(), "planning stopped: its reader closed");
    EXPECT_EQ(checks, all - 1) << ShuffleAlgoName(algo);
  }
}

// Windows of ids, joined, and whether they were planned in windows.
std::pair<bool, std::vector<int64_t>> Windowed(const PlanRequest& q, int64_t node, int64_t rank, int64_t worker,
                                               int64_t window) {
  std::vector<int64_t> got;
  auto done = PlanWorkerWindows(q, node, rank, worker, window, [&](std::span<const int64_t> ids) {
    got.insert(got.end(), ids.begin(), ids.end());
    return Status::Ok();
  });
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return {done.ok() && *done, got};
}

TEST(PlanWorkerWindowsTest, SeveralCanonicalNodesAWorkerAreWindowed) {
  // py1s's default: 64 canonical nodes a node, read round-robin by the one
  // process; py1e over 8 nodes of a 2 x 2 x 2 world, each worker reading
  // its node's 4 interleaved.
  const PlanRequest q1 = OneProcessEpoch(ShuffleAlgo::kPy1s);
  const auto [w1, got1] = Windowed(q1, 0, 0, 0, 100);
  EXPECT_TRUE(w1);
  EXPECT_EQ(got1, *PlanWorker(q1, 0, 0, 0));
  PlanRequest q2 = OneProcessEpoch(ShuffleAlgo::kPy1e);
  q2.config.num_canonical_nodes = 8;
  q2.world.num_nodes = q2.world.ranks_per_node = q2.world.workers_per_rank = 2;
  for (int64_t node = 0; node < 2; ++node) {
    const auto [w2, got2] = Windowed(q2, node, 1, 1, 7);
    EXPECT_TRUE(w2);
    EXPECT_EQ(got2, *PlanWorker(q2, node, 1, 1));
  }
}

TEST(PlanWorkerWindowsTest, ReadersLargerThanThePlanArePlannedWhole) {
  // py1s over 8 canonical nodes of one shard of 2^20 + 1 samples, read
  // interleaved by each of 8 workers: 8 readers of a shard each (8 bytes a
  // sample) would hold just over 64 MiB, beyond the floor and the whole
  // plan's 12 bytes a slot (12 MiB). With 2 canonical nodes, 16 MiB: in
  // windows.
  PlanRequest q;
  q.streams.push_back({std::vector<int64_t>(8, (int64_t{1} << 20) + 1), {}});
  q.config.batch_size = 8;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1s;
  q.config.num_canonical_nodes = 8;
  q.world.workers_per_rank = 8;
  const auto [w, got] = Windowed(q, 0, 0, 5, 1000);
  EXPECT_FALSE(w);
  EXPECT_EQ(got, *PlanWorker(q, 0, 0, 5));
  q.config.num_canonical_nodes = 2;
  const auto [w1, got1] = Windowed(q, 0, 0, 5, 1000);
  EXPECT_TRUE(w1);
  EXPECT_EQ(got1, *PlanWorker(q, 0, 0, 5));
}

TEST(PlanWorkerWindowsTest, ASinkErrorStopsPlanning) {
  const PlanRequest q = OneProcessEpoch(ShuffleAlgo::kPy1e);
  int calls = 0;
  auto done = PlanWorkerWindows(q, 0, 0, 0, 64, [&](std::span<const int64_t> ids) {
    EXPECT_EQ(ids.size(), 64u);
    return ++calls == 3 ? IoError("stdout closed") : Status::Ok();
  });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(done.status().ToString(), IoError("stdout closed").ToString());
  EXPECT_EQ(PlanWorkerWindows(q, 0, 0, 0, 0, [](std::span<const int64_t>) { return Status::Ok(); })
                .status()
                .ToString(),
            InvalidArgumentError("a plan's window must hold at least one id, not 0").ToString());
}

TEST(PlanMemoryTest, CheckPlanMemorySaysWhatItWouldHold) {
  EXPECT_TRUE(CheckPlanMemory("x", "sample", 1000, 12, 12000, "r").ok());
  EXPECT_TRUE(CheckPlanMemory("x", "sample", int64_t{1} << 40, 12, 0, "r").ok());  // no limit known
  EXPECT_EQ(CheckPlanMemory("the plan of worker 3", "sample", 1001, 12, 12000, "use more workers").ToString(),
            InvalidArgumentError("the plan of worker 3 holds 1001 samples at once: about 12012 bytes (12 a sample), "
                                 "more than the 12000 bytes this process may use; use more workers")
                .ToString());
  EXPECT_GT(ProcessMemoryLimit(), uint64_t{1} << 20);
}

// 2^36 - 2^26 samples, one process: no machine holds its plan whole.
PlanRequest HugeOneProcessEpoch(ShuffleAlgo algo) {
  PlanRequest q = OneProcessEpoch(algo);
  q.streams[0].shard_sizes.assign(1023, int64_t{1} << 26);
  return q;
}

TEST(PlanMemoryTest, AWorkerPlanTooLargeFailsBeforeItIsMade) {
  const int64_t n = 1023 * (int64_t{1} << 26);
  auto py1e = PlanWorker(HugeOneProcessEpoch(ShuffleAlgo::kPy1e), 0, 0, 0);
  ASSERT_FALSE(py1e.ok());
  EXPECT_EQ(py1e.status().code(), StatusCode::kInvalidArgument);
  const std::string head = "the plan of worker (node 0, rank 0, worker 0) in epoch 0 of " + std::to_string(n) +
                           " samples holds " + std::to_string(n) + " samples at once: about ";
  EXPECT_EQ(py1e.status().message().substr(0, head.size()), head) << py1e.status().ToString();
  EXPECT_NE(py1e.status().message().find(std::to_string(n * 12) + " bytes (12 a sample), more than the "),
            std::string::npos);
  EXPECT_TRUE(py1e.status().message().ends_with(
      " bytes this process may use; spread the epoch over more ranks or DataLoader workers (each plans only its "
      "share), or plan it in windows (PlanWorkerWindows; `sluice plan` does)"))
      << py1e.status().ToString();

  auto py1br = PlanWorker(HugeOneProcessEpoch(ShuffleAlgo::kPy1br), 0, 0, 0);
  ASSERT_FALSE(py1br.ok());
  EXPECT_NE(py1br.status().message().find("holds " + std::to_string(2 * n) + " samples at once: about " +
                                          std::to_string(16 * n) + " bytes (8 a sample)"),
            std::string::npos)
      << py1br.status().ToString();
  EXPECT_TRUE(py1br.status().message().ends_with(
      "shuffle algorithm 'py1br' holds the epoch's whole permutation in every worker: shuffle with py1e or py1s (a "
      "worker then holds only its share, or plans in windows)"));

  // The windowed path's fallback checks the same way.
  auto windows = PlanWorkerWindows(HugeOneProcessEpoch(ShuffleAlgo::kPy1br), 0, 0, 0, 1024,
                                   [](std::span<const int64_t>) { return Status::Ok(); });
  EXPECT_EQ(windows.status().ToString(), py1br.status().ToString());

  auto whole = PlanEpoch(HugeOneProcessEpoch(ShuffleAlgo::kPy1e));
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.status().message().find("the whole plan of epoch 0 of " + std::to_string(n) + " samples holds " +
                                          std::to_string(n) + " samples at once: about " + std::to_string(24 * n) +
                                          " bytes (24 a sample)"),
            std::string::npos)
      << whole.status().ToString();

  auto share = WorkerPlanSize(HugeOneProcessEpoch(ShuffleAlgo::kPy1e));
  ASSERT_TRUE(share.ok());
  EXPECT_EQ(*share, n);
}

}  // namespace
}  // namespace sluice::planner

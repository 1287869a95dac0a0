// Several processes over one remote: simulated nodes (one cache folder each)
// x ranks x data-loader workers, forked; and a fetcher SIGKILLed mid-download.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/planner/plan.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::ScratchDir;
using testing::Fork;
using testing::ReadResult;
using testing::RunWorker;
using testing::WaitExit;
using testing::WorkerResult;
using testing::WriteSyntheticMds;

TEST(StreamingDatasetMultiProcess, NodesRanksWorkersReadTheEpochOncePerNodeUnderTheLimit) {
  ScratchDir remote, scratch;
  WriteSyntheticMds(remote.path(), 800, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t dataset_bytes = testing::ShardBytesOnDisk(remote.path());
  const uint64_t limit = dataset_bytes * 65 / 100;  // below the dataset, above a node's half
  constexpr int64_t kNodes = 2, kRanks = 2, kWorkers = 2;

  auto options = [&](int64_t node, int64_t rank) {
    DatasetOptions o;
    StreamOptions s;
    s.remote = "file://" + remote.path();  // through the file store
    s.local = JoinPath(scratch.path(), "node" + std::to_string(node));
    o.streams.push_back(s);
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 42;
    o.plan.batch_size = 4;
    o.plan.num_canonical_nodes = 2;
    o.predownload = 8;
    o.prefetch_next_epoch = false;  // count this epoch's fetches only
    o.world.rank = node * kRanks + rank;
    o.world.world_size = kNodes * kRanks;
    o.world.local_rank = rank;
    o.world.local_world_size = kRanks;
    o.wait_timeout = std::chrono::seconds(30);
    return o;
  };

  std::map<std::tuple<int64_t, int64_t, int64_t>, pid_t> pids;
  for (int64_t n = 0; n < kNodes; ++n) {
    for (int64_t r = 0; r < kRanks; ++r) {
      for (int64_t w = 0; w < kWorkers; ++w) {
        std::string out = JoinPath(scratch.path(), "result_" + std::to_string(n) + std::to_string(r) +
                                                       std::to_string(w));
        DatasetOptions o = options(n, r);
        pids[{n, r, w}] = Fork([o, w, out] { return RunWorker(o, w, kWorkers, out); });
      }
    }
  }
  // Forked first, then the sampler thread: a thread allocating while fork()
  // runs can leave the child's allocator locked (ASan's is not fork-safe).
  testing::DiskSampler sampler(testing::DiskSampler::FolderPerNode(
      {JoinPath(scratch.path(), "node0"), JoinPath(scratch.path(), "node1")}));
  static_assert(kNodes == 2);
  for (const auto& [key, pid] : pids) EXPECT_EQ(WaitExit(pid), 0);
  sampler.Stop();

  // The whole epoch, planned in this one process.
  planner::PlanRequest req;
  req.config = options(0, 0).plan;
  planner::StreamSpec spec;
  for (const auto& e : (*reader)->index().shards) spec.shard_sizes.push_back(e.samples);
  req.streams.push_back(spec);
  req.world = {kNodes, kRanks, kWorkers, {}, {}, {}};
  std::map<int64_t, int> expected_count, seen_count;
  std::map<int64_t, uint64_t> node_fetches;
  std::map<int64_t, std::set<size_t>> node_shards;
  SampleFields f;
  for (const auto& [key, pid] : pids) {
    auto [n, r, w] = key;
    auto plan = planner::PlanWorker(req, n, r, w);
    ASSERT_TRUE(plan.ok());
    WorkerResult got = ReadResult(JoinPath(
        scratch.path(), "result_" + std::to_string(n) + std::to_string(r) + std::to_string(w)));
    EXPECT_EQ(got.ids, *plan) << n << r << w;
    ASSERT_EQ(got.bytes.size(), got.ids.size());
    for (size_t i = 0; i < got.ids.size(); ++i) {
      ASSERT_TRUE((*reader)->Read(static_cast<uint64_t>(got.ids[i]), &f).ok());
      ASSERT_EQ(got.bytes[i], FieldBytes(f)) << got.ids[i];
      ++seen_count[got.ids[i]];
      node_shards[n].insert(f.where.shard);
    }
    for (int64_t id : *plan) ++expected_count[id];
    node_fetches[n] += got.counters.shards_downloaded;
    EXPECT_EQ(got.counters.shards_evicted, 0u);
  }
  EXPECT_EQ(seen_count, expected_count);
  EXPECT_EQ(seen_count.size(), 800u);  // every sample, at least once
  for (int64_t n = 0; n < kNodes; ++n) {
    EXPECT_LT(node_shards[n].size(), (*reader)->num_shards()) << "a node reads part of the dataset";
    EXPECT_EQ(node_fetches[n], node_shards[n].size()) << "node " << n << ": one fetch per shard";
  }
  EXPECT_GT(sampler.max(), 0u);
  EXPECT_LE(sampler.max(), limit);
}

TEST(StreamingDatasetMultiProcess, KilledDownloaderLeavesNoPartialShardAndOthersFinish) {
  ScratchDir remote, cache, scratch;
  WriteSyntheticMds(remote.path(), 200, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  size_t shards = (*reader)->num_shards();
  ASSERT_GT(shards, 5u);
  // Shard 3 is served through a FIFO, so its download stalls half way.
  std::string victim = JoinPath(remote.path(), "shard.00003.mds");
  auto real = ReadFile(victim);
  ASSERT_TRUE(real.ok());
  ASSERT_TRUE(fs::remove(victim));
  ASSERT_EQ(mkfifo(victim.c_str(), 0644), 0);

  DatasetOptions o;
  StreamOptions s;
  s.remote = remote.path();
  s.local = cache.path();
  o.streams.push_back(s);
  o.predownload = 1;
  o.prefetch_next_epoch = false;
  // One shard at a time: A has completed exactly the shards before 3 when
  // it hangs there.
  o.fetch_concurrency = 1;
  o.world.rank = 0;
  o.world.world_size = 1;
  o.wait_timeout = std::chrono::seconds(20);
  // No guessed head: its read runs on a thread of the open below, which
  // may be inside the allocator as A is forked; a child of the ASan build
  // then waits on the allocator's lock for ever (seen: A's threads stuck
  // in ASan's allocator, 1 run of this suite in 3). A's downloads are what
  // this test is about.
  o.guess_first_shard = false;
  // Opened here, used by forked children: each opens its own cache state.
  auto parent_ds = StreamingDataset::Open(o);
  ASSERT_TRUE(parent_ds.ok());

  pid_t a = Fork([&] {
    std::vector<int64_t> ids(1000);
    std::vector<SampleFields> fields;
    if (!(*parent_ds)->IterBegin(0, 0, 0, 1).ok()) return 2;
    auto n = (*parent_ds)->NextBatch(1000, ids.data(), &fields);
    while (n.ok() && *n > 0) n = (*parent_ds)->NextBatch(1000, ids.data(), &fields);
    return n.ok() ? 0 : 3;
  });
  // A is killed however the test ends (a failed assertion too): left
  // alive, it would hold the suite's output open until its timeout.
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() {
      if (pid > 0) ::kill(pid, SIGKILL);
    }
  } kill_a{a};
  int fifo = -1;
  for (int i = 0; i < 10000 && fifo < 0; ++i) {
    fifo = ::open(victim.c_str(), O_WRONLY | O_NONBLOCK);
    if (fifo < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(fifo, 0) << "the downloader never opened shard 3";
  size_t half = real->size() / 2;
  ASSERT_EQ(::write(fifo, real->data(), half), static_cast<ssize_t>(half));
  // Wait until the partial bytes sit in the cache's temp file.
  bool partial = false;
  for (int i = 0; i < 10000 && !partial; ++i) {
    for (const auto& e : fs::directory_iterator(cache.path())) {
      std::string name = e.path().filename().string();
      std::error_code ec;
      if (name.rfind(".shard.00003.mds.sluice-tmp.", 0) == 0 && e.file_size(ec) == half) {
        partial = true;
      }
    }
    if (!partial) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(partial);
  // The remote heals; a second process starts and waits for shard 3.
  ASSERT_TRUE(WriteFileAtomic(victim + ".new", *real).ok());
  ASSERT_EQ(std::rename((victim + ".new").c_str(), victim.c_str()), 0);
  std::string out = JoinPath(scratch.path(), "c");
  pid_t c = Fork([&] { return RunWorker(o, 0, 1, out); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(FileExists(JoinPath(cache.path(), "shard.00003.mds")));
  ::kill(a, SIGKILL);
  EXPECT_EQ(WaitExit(a), 128 + SIGKILL);
  kill_a.pid = -1;  // reaped: its pid may be another process's now
  ::close(fifo);
  ASSERT_EQ(WaitExit(c), 0);
  WorkerResult got = ReadResult(out);
  ASSERT_EQ(got.ids.size(), 200u);
  SampleFields f;
  for (size_t i = 0; i < got.ids.size(); ++i) {
    ASSERT_EQ(got.ids[i], static_cast<int64_t>(i));
    ASSERT_TRUE((*reader)->Read(i, &f).ok());
    ASSERT_EQ(got.bytes[i], FieldBytes(f)) << i;
  }
  // A's complete shards 0..2 were reused; C fetched the rest (3 included).
  EXPECT_EQ(got.counters.shards_downloaded, shards - 3);
  // A new run reuses everything, and no temp file is left behind.
  auto again = StreamingDataset::Open(o);
  ASSERT_TRUE(again.ok());
  std::vector<std::string> bytes;
  testing::ReadEpoch(**again, 0, 0, 0, 1, 32, &bytes);
  EXPECT_EQ(bytes.size(), 200u);
  EXPECT_EQ((*again)->counters().shards_downloaded, 0u);
  for (const auto& e : fs::directory_iterator(cache.path())) {
    EXPECT_FALSE(ParseTempName(e.path().filename().string()).has_value()) << e.path();
  }
  // The parent's own handle still works after its children forked off.
  ASSERT_TRUE((*parent_ds)->Get(199, &f).ok());
}

// Four processes of one node under a limit of two shards: a reader waits
// for a shard only while it pins nothing, so the readers take turns instead
// of holding shards while waiting for room (which would expire wait_timeout).
TEST(StreamingDatasetMultiProcess, ReadersOfANodeTakeTurnsUnderATwoShardLimit) {
  ScratchDir remote, scratch;
  WriteSyntheticMds(remote.path(), 400, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t largest = 0;
  for (const auto& e : (*reader)->index().shards) largest = std::max(largest, e.raw_data.bytes);
  const uint64_t limit = 2 * largest;
  constexpr int64_t kRanks = 2, kWorkers = 2;
  const std::string local = JoinPath(scratch.path(), "node");
  auto options = [&](int64_t rank) {
    DatasetOptions o;
    StreamOptions s;
    s.remote = remote.path();
    s.local = local;
    o.streams.push_back(s);
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 8;
    o.plan.batch_size = 4;
    o.predownload = 32;
    o.prefetch_next_epoch = false;
    o.world.rank = rank;
    o.world.world_size = kRanks;
    o.world.local_rank = rank;
    o.world.local_world_size = kRanks;
    o.wait_timeout = std::chrono::seconds(20);
    return o;
  };
  std::map<std::pair<int64_t, int64_t>, pid_t> pids;
  for (int64_t r = 0; r < kRanks; ++r) {
    for (int64_t w = 0; w < kWorkers; ++w) {
      std::string out = JoinPath(scratch.path(), "r" + std::to_string(r) + std::to_string(w));
      DatasetOptions o = options(r);
      pids[{r, w}] = Fork([o, w, out] { return RunWorker(o, w, kWorkers, out); });
    }
  }
  testing::DiskSampler sampler({{local}});
  for (const auto& [key, pid] : pids) EXPECT_EQ(WaitExit(pid), 0);
  sampler.Stop();
  std::map<int64_t, int> seen;
  for (const auto& [key, pid] : pids) {
    auto ds = StreamingDataset::Open(options(key.first));
    ASSERT_TRUE(ds.ok());
    auto plan = (*ds)->WorkerIds(0, 0, key.second, kWorkers);
    ASSERT_TRUE(plan.ok());
    WorkerResult got = ReadResult(JoinPath(
        scratch.path(), "r" + std::to_string(key.first) + std::to_string(key.second)));
    EXPECT_EQ(got.ids, *plan);
    for (int64_t id : got.ids) ++seen[id];
  }
  EXPECT_EQ(seen.size(), 400u);
  EXPECT_GT(sampler.max(), 0u);
  EXPECT_LE(sampler.max(), limit);
}

}  // namespace
}  // namespace sluice

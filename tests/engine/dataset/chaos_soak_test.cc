// The chaos soak: 2 nodes x 2 ranks x 2 data-loader workers as 8 processes
// stream one shuffled epoch of a zstd-compressed, xxh64-hashed dataset from
// nginx through a ChaosProxy (resets, truncations, stalls, 503s, 429s, bit
// flips), each node's cache folder under a cache_limit below its share.
// The whole job is SIGKILLed mid-epoch and restarted from a sample_in_epoch
// (as a trainer resumes from its state_dict), `rounds` times, and then runs
// to the end of the epoch.
//
// Checks: every process read exactly its planned order from where it
// (re)started, every sample's bytes are the dataset's, no node's folder ever
// held more than its limit, no temporary outlived the job, and every fault
// kind happened. Prints the counts.
//
// Profiles: SLUICE_SOAK_ROUNDS (kill and resume rounds, default 1: the CI
// profile, seconds) and SLUICE_SOAK_SEED (default 1); `./dev soak` runs a
// long profile.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/chaos_proxy.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::Fork;
using testing::ScratchDir;
using testing::WaitExit;

constexpr int64_t kNodes = 2, kRanks = 2, kWorkers = 2, kBatch = 8;
constexpr int kSamples = 3200;
constexpr int kFaultyPercent = 30;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

// One line per sample: "<id> <hash of its fields' bytes>", one write per
// batch (O_APPEND, so a SIGKILL leaves whole batches); at the end of the
// epoch a last line "end <downloads> <evictions> <cache hits>".
int SoakWorker(DatasetOptions o, int64_t worker, int64_t start, const std::string& out) {
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return 2;
  auto ds = StreamingDataset::Open(std::move(o));
  if (!ds.ok()) {
    std::fprintf(stderr, "open: %s\n", ds.status().ToString().c_str());
    return 3;
  }
  if (Status st = (*ds)->IterBegin(0, start, worker, kWorkers); !st.ok()) {
    std::fprintf(stderr, "iter: %s\n", st.ToString().c_str());
    return 4;
  }
  std::vector<int64_t> ids(kBatch);
  std::vector<SampleFields> fields;
  for (;;) {
    auto n = (*ds)->NextBatch(kBatch, ids.data(), &fields);
    if (!n.ok()) {
      std::fprintf(stderr, "next: %s\n", n.status().ToString().c_str());
      return 5;
    }
    if (*n == 0) break;
    std::string lines;
    for (size_t k = 0; k < *n; ++k) {
      lines += std::to_string(ids[k]) + " " +
               std::to_string(std::hash<std::string>()(FieldBytes(fields[k]))) + "\n";
    }
    if (::write(fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) return 6;
  }
  DatasetCounters c = (*ds)->counters();
  std::string end = "end " + std::to_string(c.shards_downloaded) + " " +
                    std::to_string(c.shards_evicted) + " " + std::to_string(c.cache_hits) + "\n";
  return ::write(fd, end.data(), end.size()) == static_cast<ssize_t>(end.size()) ? 0 : 6;
}

struct WorkerLog {
  std::vector<std::pair<int64_t, size_t>> samples;  // id, hash
  bool ended = false;
  uint64_t downloads = 0, evictions = 0, hits = 0;
};

WorkerLog ReadLog(const std::string& path) {
  WorkerLog log;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    if (line.rfind("end ", 0) == 0) {
      std::string tag;
      fields >> tag >> log.downloads >> log.evictions >> log.hits;
      log.ended = true;
      continue;
    }
    int64_t id = 0;
    size_t hash = 0;
    fields >> id >> hash;
    log.samples.emplace_back(id, hash);
  }
  return log;
}

using Key = std::tuple<int64_t, int64_t, int64_t>;  // node, rank, worker

TEST(ChaosSoak, KilledAndResumedJobReadsItsPlanThroughAFaultyNetwork) {
  const int64_t rounds = EnvInt("SLUICE_SOAK_ROUNDS", 1);
  const uint64_t seed = static_cast<uint64_t>(EnvInt("SLUICE_SOAK_SEED", 1));
  ScratchDir scratch;
  const std::string server_dir = JoinPath(scratch.path(), "nginx");
  ASSERT_TRUE(fs::create_directories(server_dir));
  auto nginx = testing::NginxServer::Start(server_dir);
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string data = JoinPath(nginx->www(), "ds");
  testing::WriteSyntheticMds(data, kSamples, 6000, std::string("zstd"), {"xxh64"});
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  uint64_t raw_bytes = 0;
  for (const ShardEntry& e : (*reader)->index().shards) raw_bytes += e.raw_data.bytes;
  // Below a node's half of the dataset: nodes evict as they go.
  const uint64_t limit = raw_bytes * 30 / 100;
  std::vector<size_t> expected_hash(kSamples);
  SampleFields f;
  for (int64_t id = 0; id < kSamples; ++id) {
    ASSERT_TRUE((*reader)->Read(static_cast<uint64_t>(id), &f).ok());
    expected_hash[id] = std::hash<std::string>()(FieldBytes(f));
  }

  auto proxy = testing::ChaosProxy::Start(nginx->http_port(), JoinPath(scratch.path(), "faults"),
                                          seed, kFaultyPercent);
  ASSERT_NE(proxy, nullptr);
  const std::string remote = "http://127.0.0.1:" + std::to_string(proxy->port()) + "/ds";

  auto options = [&](int64_t node, int64_t rank, const std::string& from, const std::string& local) {
    DatasetOptions o;
    StreamOptions s;
    s.remote = from;
    s.local = local;
    s.download_retry = 8;  // bit flips are caught by the hash and fetched again
    s.read_timeout_s = 1.0;  // a hang (2.5 s) is cut and retried
    s.validate_hash = "xxh64";
    o.streams.push_back(s);
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = static_cast<int64_t>(seed);
    o.plan.batch_size = kBatch;
    o.plan.num_canonical_nodes = 2;
    o.predownload = 16;
    o.prefetch_next_epoch = false;
    o.world.rank = node * kRanks + rank;
    o.world.world_size = kNodes * kRanks;
    o.world.local_rank = rank;
    o.world.local_world_size = kRanks;
    o.wait_timeout = std::chrono::seconds(60);
    return o;
  };
  auto node_dir = [&](int64_t n) { return JoinPath(scratch.path(), "node" + std::to_string(n)); };
  // The plan of a worker from `start`: the same options over the dataset's folder.
  auto plan = [&](const Key& key, int64_t start) {
    auto [n, r, w] = key;
    auto ds = StreamingDataset::Open(options(n, r, data, JoinPath(scratch.path(), "plan")));
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    auto ids = (*ds)->WorkerIds(0, start, w, kWorkers);
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    return ids.ok() ? *ids : std::vector<int64_t>{};
  };

  int64_t start = 0;
  int kills = 0;
  uint64_t verified = 0, downloads = 0, evictions = 0;
  uint64_t max_node_bytes = 0;
  for (int64_t round = 0; round <= rounds; ++round) {
    const bool last = round == rounds;
    std::map<Key, pid_t> pids;
    std::map<Key, std::string> logs;
    for (int64_t n = 0; n < kNodes; ++n) {
      for (int64_t r = 0; r < kRanks; ++r) {
        for (int64_t w = 0; w < kWorkers; ++w) {
          const Key key{n, r, w};
          logs[key] = JoinPath(scratch.path(), "log_" + std::to_string(round) + "_" +
                                                   std::to_string(n) + std::to_string(r) +
                                                   std::to_string(w));
          DatasetOptions o = options(n, r, remote, node_dir(n));
          const std::string out = logs[key];
          pids[key] = Fork([o, w, start, out] { return SoakWorker(o, w, start, out); });
        }
      }
    }
    // Forked first, then the sampler thread: no child inherits a busy thread.
    std::vector<std::string> node_dirs;
    for (int64_t n = 0; n < kNodes; ++n) node_dirs.push_back(node_dir(n));
    testing::DiskSampler sampler(testing::DiskSampler::FolderPerNode(node_dirs));
    if (!last) {
      // Kill the job once it has read a third of what is left (or when every
      // process has ended, then there is nothing to kill).
      const size_t target = static_cast<size_t>(kSamples - start) / 3;
      for (bool running = true; running;) {
        size_t lines = 0;
        for (const auto& [key, path] : logs) lines += ReadLog(path).samples.size();
        if (lines >= target) break;
        running = false;
        for (const auto& [key, pid] : pids) running |= ::waitpid(pid, nullptr, WNOHANG) == 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      for (const auto& [key, pid] : pids) ::kill(pid, SIGKILL);
    }
    for (const auto& [key, pid] : pids) {
      int code = WaitExit(pid);
      kills += code == 128 + SIGKILL;
      if (last) {
        EXPECT_EQ(code, 0) << "round " << round;
      } else {
        // Killed, or done before the kill (a process that exited may also
        // be "killed" after the fact: kill of a zombie is a no-op).
        EXPECT_TRUE(code == 0 || code == 128 + SIGKILL) << "round " << round << " exit " << code;
      }
    }
    sampler.Stop();
    max_node_bytes = std::max(max_node_bytes, sampler.max());

    // Every process read a prefix of its plan (all of it in the last round).
    size_t least = SIZE_MAX;
    for (const auto& [key, path] : logs) {
      WorkerLog log = ReadLog(path);
      std::vector<int64_t> want = plan(key, start);
      ASSERT_LE(log.samples.size(), want.size());
      if (last) {
        EXPECT_TRUE(log.ended);
        EXPECT_EQ(log.samples.size(), want.size()) << "round " << round;
      }
      for (size_t i = 0; i < log.samples.size(); ++i) {
        ASSERT_EQ(log.samples[i].first, want[i]) << "round " << round << " position " << i;
        ASSERT_EQ(log.samples[i].second, expected_hash[want[i]]) << "sample " << want[i];
      }
      verified += log.samples.size();
      downloads += log.downloads;
      evictions += log.evictions;
      least = std::min(least, log.samples.size());
    }
    // Resume where the slowest worker of the job is, in whole batches: as a
    // trainer whose state_dict counts the samples every rank has consumed.
    const int64_t step = kBatch * kWorkers * kNodes * kRanks;
    start = std::min<int64_t>(start + static_cast<int64_t>(least / kBatch) * step, kSamples);
  }

  EXPECT_LE(max_node_bytes, limit);
  EXPECT_GT(evictions, 0u);
  EXPECT_GT(max_node_bytes, 0u);
  for (int64_t n = 0; n < kNodes; ++n) {
    for (const auto& e : fs::recursive_directory_iterator(node_dir(n))) {
      EXPECT_FALSE(ParseTempName(e.path().filename().string()).has_value())
          << "left behind: " << e.path();
    }
  }
  std::map<std::string, int> faults = proxy->FaultCounts();
  std::string summary;
  for (const char* kind :
       {"pass", "reset", "truncate", "stall", "hang", "503", "429", "bitflip"}) {
    EXPECT_GT(faults[kind], 0) << kind << " never happened";
    summary += std::string(" ") + kind + "=" + std::to_string(faults[kind]);
  }
  EXPECT_GT(kills, 0) << "the job always ended before the kill";
  std::printf("chaos soak: seed %llu, %d rounds, %d processes killed, %llu samples verified, %llu downloads, "
              "%llu evictions, peak node cache %llu of %llu bytes; connections:%s\n",
              static_cast<unsigned long long>(seed), static_cast<int>(rounds), kills,
              static_cast<unsigned long long>(verified), static_cast<unsigned long long>(downloads),
              static_cast<unsigned long long>(evictions),
              static_cast<unsigned long long>(max_node_bytes),
              static_cast<unsigned long long>(limit), summary.c_str());
}

}  // namespace
}  // namespace sluice

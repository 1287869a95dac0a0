// Several processes over one remote served by a real s3rver: 2 simulated
// nodes (one cache folder each) x 2 ranks x 2 data-loader workers, forked.
// Each node reaches s3rver through its own RequestLogProxy, so the requests
// are counted on the wire, not only by the engine's own counters.
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/runtime/event_loop.h"
#include "formats/dataset/dataset_reader.h"
#include "stores/store.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/engine/dataset/request_log_proxy.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::Fork;
using testing::ReadResult;
using testing::RequestLogProxy;
using testing::ScratchDir;
using testing::WaitExit;
using testing::WorkerResult;

constexpr char kKeyId[] = "SLUICEENGINEKEY";
constexpr char kSecret[] = "engine-s3cr3t-never-printed";
constexpr char kPrefix[] = "ds";  // the dataset's folder in bucket "bkt"

TEST(StreamingDatasetS3MultiProcess, NodesRanksWorkersOverS3rver) {
  std::string why = testing::NodeServersUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << why;
  ScratchDir data, scratch, server_dir;
  // 800 = C(2) x P(2) x R(2) x W(2) x B(4) x 25: no padding, no repeats, so
  // every sample is read exactly once.
  constexpr int kSamples = 800;
  testing::WriteSyntheticMds(data.path(), kSamples, 2000);
  auto reader = DatasetReader::Open(data.path());
  ASSERT_TRUE(reader.ok());
  const size_t num_shards = (*reader)->num_shards();
  const uint64_t dataset_bytes = testing::ShardBytesOnDisk(data.path());
  const uint64_t limit = dataset_bytes * 65 / 100;  // below the dataset, above a node's half
  constexpr int64_t kNodes = 2, kRanks = 2, kWorkers = 2, kBatch = 4;

  auto server = testing::StartS3rver(server_dir.path(), kKeyId, kSecret, {"bkt"});
  ASSERT_NE(server, nullptr) << "s3rver did not start";
  auto env = testing::CleanStoreEnv();
  env["AWS_ACCESS_KEY_ID"] = kKeyId;
  env["AWS_SECRET_ACCESS_KEY"] = kSecret;
  env["S3_ENDPOINT_URL"] = "http://127.0.0.1:" + std::to_string(server->port());
  testing::ScopedEnv scoped(env);
  ASSERT_EQ(testing::UploadTree(std::string("s3://bkt/") + kPrefix, data.path()), 0) << server->Log();

  std::vector<std::unique_ptr<RequestLogProxy>> proxies;
  for (int64_t n = 0; n < kNodes; ++n) {
    proxies.push_back(RequestLogProxy::Start(
        server->port(), JoinPath(scratch.path(), "requests" + std::to_string(n))));
    ASSERT_NE(proxies.back(), nullptr);
  }

  auto options = [&](int64_t node, int64_t rank, const std::string& local) {
    DatasetOptions o;
    StreamOptions s;
    s.remote = std::string("s3://bkt/") + kPrefix;
    s.local = local;
    s.download_retry = 0;  // a retry would be a second GET
    o.streams.push_back(s);
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 7;
    o.plan.batch_size = kBatch;
    o.plan.num_canonical_nodes = 2;
    o.predownload = 8;
    o.prefetch_next_epoch = false;  // this epoch's fetches only
    o.peek_first_sample = false;    // one GET per shard per node, counted below
    o.world.rank = node * kRanks + rank;
    o.world.world_size = kNodes * kRanks;
    o.world.local_rank = rank;
    o.world.local_world_size = kRanks;
    o.wait_timeout = std::chrono::seconds(30);
    return o;
  };
  auto node_dir = [&](int64_t n) { return JoinPath(scratch.path(), "node" + std::to_string(n)); };
  auto result_path = [&](int64_t n, int64_t r, int64_t w) {
    return JoinPath(scratch.path(),
                    "result_" + std::to_string(n) + std::to_string(r) + std::to_string(w));
  };

  std::map<std::tuple<int64_t, int64_t, int64_t>, pid_t> pids;
  for (int64_t n = 0; n < kNodes; ++n) {
    std::string endpoint = "http://127.0.0.1:" + std::to_string(proxies[n]->port());
    for (int64_t r = 0; r < kRanks; ++r) {
      for (int64_t w = 0; w < kWorkers; ++w) {
        DatasetOptions o = options(n, r, node_dir(n));
        std::string out = result_path(n, r, w);
        pids[{n, r, w}] = Fork([o, w, out, endpoint] {
          ::setenv("S3_ENDPOINT_URL", endpoint.c_str(), 1);  // this node's proxy
          return testing::RunWorker(o, w, kWorkers, out);
        });
      }
    }
  }
  // Forked first, then the sampler thread: no child inherits a busy thread.
  testing::DiskSampler sampler(testing::DiskSampler::FolderPerNode({node_dir(0), node_dir(1)}));
  for (const auto& [key, pid] : pids) EXPECT_EQ(WaitExit(pid), 0);
  sampler.Stop();

  // Collect: every worker's samples with the reader's bytes, per node the
  // shards read and the engine's fetch counters.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> worker_ids;
  std::map<int64_t, int> seen;
  std::map<int64_t, std::set<std::string>> node_shards;
  std::map<int64_t, uint64_t> node_fetches;
  SampleFields f;
  for (const auto& [key, pid] : pids) {
    auto [n, r, w] = key;
    WorkerResult got = ReadResult(result_path(n, r, w));
    ASSERT_EQ(got.bytes.size(), got.ids.size());
    for (size_t i = 0; i < got.ids.size(); ++i) {
      ASSERT_TRUE((*reader)->Read(static_cast<uint64_t>(got.ids[i]), &f).ok());
      ASSERT_EQ(got.bytes[i], FieldBytes(f)) << got.ids[i];
      ++seen[got.ids[i]];
      node_shards[n].insert((*reader)->index().shards[f.where.shard].raw_data.basename);
    }
    node_fetches[n] += got.counters.shards_downloaded;
    EXPECT_EQ(got.counters.shards_evicted, 0u);
    worker_ids[key] = std::move(got.ids);
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kSamples));
  for (const auto& [id, count] : seen) ASSERT_EQ(count, 1) << "sample " << id;

  // One GET per shard per node, counted on the wire, plus one of index.json.
  const std::string object = std::string("/bkt/") + kPrefix + "/";
  for (int64_t n = 0; n < kNodes; ++n) {
    std::map<std::string, int> gets;
    for (const std::string& line : proxies[n]->Requests()) {
      ASSERT_EQ(line.rfind("GET " + object, 0), 0u) << "node " << n << ": " << line;
      std::string key = line.substr(4 + object.size());
      key = key.substr(0, key.find(' '));
      ++gets[key];
    }
    std::map<std::string, int> expected;
    expected["index.json"] = 1;
    for (const std::string& shard : node_shards[n]) expected[shard] = 1;
    EXPECT_EQ(gets, expected) << "node " << n;
    EXPECT_LT(node_shards[n].size(), num_shards) << "a node reads part of the dataset";
    EXPECT_EQ(node_fetches[n], node_shards[n].size()) << "node " << n;
  }
  EXPECT_GT(sampler.samples(), 0u);
  EXPECT_GT(sampler.max(), 0u);
  EXPECT_LE(sampler.max(), limit);

  // The global order: sample k of the epoch went to node k % P, that node's
  // k / P-th to rank (k / P) % R, whose q-th went to worker (q / B) % W as
  // position (q / (W B)) B + q % B. It must be the order one process reads.
  std::vector<int64_t> global;
  for (int64_t k = 0; k < kSamples; ++k) {
    int64_t n = k % kNodes, m = k / kNodes, r = m % kRanks, q = m / kRanks;
    int64_t w = (q / kBatch) % kWorkers, pos = (q / (kWorkers * kBatch)) * kBatch + q % kBatch;
    const auto& ids = worker_ids[{n, r, w}];
    ASSERT_LT(static_cast<size_t>(pos), ids.size());
    global.push_back(ids[pos]);
  }
  DatasetOptions one = options(0, 0, JoinPath(scratch.path(), "single"));
  one.world.rank = 0;
  one.world.world_size = 1;
  one.world.local_rank = 0;
  one.world.local_world_size = 1;
  std::string out = JoinPath(scratch.path(), "result_single");
  ASSERT_EQ(WaitExit(Fork([&] { return testing::RunWorker(one, 0, 1, out); })), 0);
  WorkerResult single = ReadResult(out);
  ASSERT_EQ(single.ids.size(), static_cast<size_t>(kSamples));
  EXPECT_EQ(global, single.ids);
}

}  // namespace
}  // namespace sluice

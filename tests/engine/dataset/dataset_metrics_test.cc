// The dataset's counters against jobs whose counts are known: a folder
// remote read once (every shard downloaded once, its bytes the files'),
// a real HTTP server behind a proxy that answers 503 twice (exact
// requests, retries and throttles for that host), and a cache limit that
// makes a reader wait for room another reader holds.
#include <sys/stat.h>

#include <chrono>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/diagnosis.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/json/py_json.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/stores/http/fault_proxy.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::ScratchDir;

struct ShardFiles {
  uint64_t count = 0, bytes = 0;
};

ShardFiles ShardsOf(const std::string& dir) {
  auto reader = DatasetReader::Open(dir);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  ShardFiles f;
  for (const ShardEntry& e : (*reader)->index().shards) {
    ++f.count;
    f.bytes += e.raw_data.bytes;
  }
  return f;
}

DatasetOptions MetricsOptions(const std::string& remote, const std::string& local) {
  DatasetOptions o = testing::OneStreamOptions(remote, local);
  o.peek_first_sample = false;  // exactly one fetch per shard, no ranged peeks
  return o;
}

// Reads a whole epoch; returns the bytes of the samples as handed out.
uint64_t ReadAll(StreamingDataset& ds, int64_t epoch) {
  EXPECT_TRUE(ds.IterBegin(epoch, 0, 0, 1).ok());
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> out;
  uint64_t bytes = 0;
  for (;;) {
    auto n = ds.NextBatch(ids.size(), ids.data(), &out);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) break;
    for (size_t k = 0; k < *n; ++k) bytes += out[k].raw.size();
  }
  return bytes;
}

TEST(DatasetMetrics, AFolderRemoteReadTwiceDownloadsEachShardOnceThenHitsTheCache) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 300, 2000);
  const ShardFiles files = ShardsOf(remote.path());
  ASSERT_GT(files.count, 3u);
  auto ds = StreamingDataset::Open(MetricsOptions(remote.path(), cache.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();

  const uint64_t delivered = ReadAll(**ds, 0);
  DatasetMetrics m = (*ds)->Metrics();
  EXPECT_EQ(m.samples, 300u);
  EXPECT_EQ(m.bytes, delivered);
  EXPECT_GT(m.batches, 0u);
  EXPECT_EQ(m.downloads, files.count);
  EXPECT_EQ(m.shards_downloaded, files.count);
  EXPECT_EQ(m.bytes_downloaded, files.bytes);
  EXPECT_EQ(m.download_errors, 0u);
  EXPECT_EQ(m.cache_hits, 0u);
  EXPECT_EQ(m.cache_bytes_on_disk, files.bytes);
  EXPECT_EQ(m.remote, remote.path());
  EXPECT_EQ(m.waits.total_ns, m.waits.download_ns + m.waits.peer_download_ns +
                                  m.waits.cache_room_ns + m.waits.decode_ns + m.waits.other_ns);
  EXPECT_EQ(m.waits.peer_download_ns, 0u);
  EXPECT_EQ(m.waits.cache_room_ns, 0u);

  // The report's window: everything so far, then only the second epoch.
  auto first = ParsePyJson((*ds)->MetricsReport());
  ASSERT_TRUE(first.ok());
  const JsonValue* window = JsonMember(*first, "window");
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "samples")->v), 300);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "downloads")->v),
            static_cast<int64_t>(files.count));
  EXPECT_EQ(ReadAll(**ds, 1), delivered);
  auto second = ParsePyJson((*ds)->MetricsReport());
  ASSERT_TRUE(second.ok());
  window = JsonMember(*second, "window");
  const JsonValue* totals = JsonMember(*second, "totals");
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "samples")->v), 300);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "downloads")->v), 0);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "bytes_downloaded")->v), 0);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*totals, "samples")->v), 600);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*totals, "cache_hits")->v),
            static_cast<int64_t>(files.count));
  // Nothing was downloaded in the window, so no wait was a download's.
  EXPECT_EQ(std::get<double>(JsonMember(*window, "wait_download_s")->v), 0.0);
  const std::string diagnosis = JsonStringMember(*second, "diagnosis");
  EXPECT_EQ(diagnosis.find("downloads"), std::string::npos) << diagnosis;
}

// A binding's subclass reads each id through Get: NextIds hands out
// NextBatch's ids (same calls, same order) without reading, so every
// sample is counted once, by its Get, and bytes are the Gets' bytes.
TEST(DatasetMetrics, IdsThenGetCountEachSampleOnce) {
  ScratchDir remote, cache_a, cache_b;
  testing::WriteSyntheticMds(remote.path(), 300, 2000);
  DatasetOptions options = MetricsOptions(remote.path(), cache_a.path());
  options.plan.shuffle = true;
  auto batched = StreamingDataset::Open(options);
  options.streams[0].local = cache_b.path();
  auto by_id = StreamingDataset::Open(options);
  ASSERT_TRUE(batched.ok() && by_id.ok());

  std::vector<int64_t> want;
  ASSERT_TRUE((*batched)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> out;
  for (;;) {
    auto n = (*batched)->NextBatch(ids.size(), ids.data(), &out);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    want.insert(want.end(), ids.begin(), ids.begin() + static_cast<ptrdiff_t>(*n));
  }
  ASSERT_EQ(want.size(), 300u);

  std::vector<int64_t> got;
  uint64_t bytes = 0;
  ASSERT_TRUE((*by_id)->IterBegin(0, 0, 0, 1).ok());
  for (;;) {
    auto n = (*by_id)->NextIds(ids.size(), ids.data());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    // Nothing is delivered until the Gets.
    EXPECT_EQ((*by_id)->Metrics().samples, got.size());
    for (size_t k = 0; k < *n; ++k) {
      SampleFields fields;
      ASSERT_TRUE((*by_id)->Get(static_cast<uint64_t>(ids[k]), &fields).ok());
      bytes += fields.raw.size();
      got.push_back(ids[k]);
    }
  }
  EXPECT_EQ(got, want);
  DatasetMetrics m = (*by_id)->Metrics();
  EXPECT_EQ(m.samples, 300u);
  EXPECT_EQ(m.bytes, bytes);
  EXPECT_EQ(m.bytes, (*batched)->Metrics().bytes);
  EXPECT_GT(m.batches, 0u);
  EXPECT_EQ(m.downloads, ShardsOf(remote.path()).count);
}

TEST(DatasetMetrics, NextIdsBeforeIterBeginSaysSo) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 10, 2000);
  auto ds = StreamingDataset::Open(MetricsOptions(remote.path(), cache.path()));
  ASSERT_TRUE(ds.ok());
  int64_t id = 0;
  auto n = (*ds)->NextIds(1, &id);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(n.status().message(), "NextIds before IterBegin");
}

TEST(DatasetMetrics, ThrottledRequestsAreCountedPerHostExactly) {
  ScratchDir scratch, cache;
  auto nginx = testing::NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string data = JoinPath(nginx->www(), "ds");
  testing::WriteSyntheticMds(data, 200, 2000);
  const ShardFiles files = ShardsOf(data);
  testing::FaultProxy proxy(nginx->http_port());
  // The first two connections (the index's first two attempts) are
  // throttled; everything after goes through.
  proxy.Schedule({testing::Fault::Status(503), testing::Fault::Status(503)});
  const std::string host = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto ds = StreamingDataset::Open(MetricsOptions(host + "/ds", cache.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ReadAll(**ds, 0);
  DatasetMetrics m = (*ds)->Metrics();
  const HostStatsSnapshot* h = nullptr;
  for (const HostStatsSnapshot& s : m.hosts) {
    if (s.host == host) h = &s;
  }
  ASSERT_NE(h, nullptr);
  // The index and each shard once: what nginx answered.
  std::istringstream log(nginx->AccessLog());
  uint64_t answered = 0;
  for (std::string line; std::getline(log, line);) ++answered;
  EXPECT_EQ(answered, files.count + 1);
  EXPECT_EQ(h->requests, files.count + 1);
  EXPECT_EQ(h->attempts, files.count + 3);
  EXPECT_EQ(h->retries, 2u);
  EXPECT_EQ(h->throttles_503, 2u);
  EXPECT_EQ(h->throttles_429, 0u);
  EXPECT_EQ(h->errors[static_cast<int>(HttpErrorKind::kThrottled)], 2u);
  EXPECT_EQ(h->failed, 0u);
  EXPECT_EQ(h->in_flight, 0);
  EXPECT_EQ(h->first_byte.count(), files.count + 1);
  EXPECT_EQ(h->transfer.count(), files.count + 1);
  EXPECT_EQ(m.downloads, files.count);
  EXPECT_EQ(m.bytes_downloaded, files.bytes);
  // The index's bytes too, and the 503s' bodies are not delivered.
  const uint64_t index_bytes = FileSize(JoinPath(data, "index.json")).value();
  EXPECT_EQ(h->bytes, files.bytes + index_bytes);
}

TEST(DatasetMetrics, AReaderWaitingForRoomAnotherHoldsCountsItAsCacheRoom) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 300, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  const auto& shards = (*reader)->index().shards;
  uint64_t largest = 0;
  for (const ShardEntry& e : shards) largest = std::max(largest, e.raw_data.bytes);
  ASSERT_LT(largest, shards[0].raw_data.bytes + shards[1].raw_data.bytes);
  DatasetOptions o = MetricsOptions(remote.path(), cache.path());
  o.cache_limit = largest;  // one shard at a time
  auto holder = StreamingDataset::Open(o);
  auto waiter = StreamingDataset::Open(o);
  ASSERT_TRUE(holder.ok() && waiter.ok());
  SampleFields f;
  ASSERT_TRUE((*holder)->Get(0, &f).ok());  // pins shard 0
  const uint64_t in_shard_1 = shards[0].samples;
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    (*holder)->Release();
  });
  ASSERT_TRUE((*waiter)->Get(in_shard_1, &f).ok());
  release.join();
  DatasetMetrics m = (*waiter)->Metrics();
  EXPECT_GE(m.waits.cache_room_ns, 250'000'000u);
  EXPECT_GE(m.cache_room_wait_ns, m.waits.cache_room_ns);
  EXPECT_EQ(m.waits.peer_download_ns, 0u);
  EXPECT_GT(m.waits.cache_room_ns, m.waits.total_ns / 2);
  EXPECT_EQ(m.samples, 1u);
  EXPECT_EQ(m.shards_evicted, 1u);
  // Over a window in which the wait was most of the time: cache room named.
  DatasetMetrics w = m;
  w.seconds = static_cast<double>(m.waits.total_ns) / 1e9 * 1.25;
  EXPECT_EQ(Diagnose(w).rfind("waited 80% of the time for room in the cache (cache_limit ", 0), 0u)
      << Diagnose(w);
}

TEST(DatasetMetrics, AReaderWaitingForAnothersDownloadCountsItAsPeerDownload) {
  ScratchDir scratch, cache;
  const std::string data = JoinPath(scratch.path(), "nginx/www/ds");
  testing::WriteSyntheticMds(data, 300, 8000);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok());
  const auto& shards = (*reader)->index().shards;
  ASSERT_GE(shards.size(), 2u);
  // Shard 1 comes at 4 KiB/s (nginx sends the first second's worth at once):
  // its download takes half a second or more.
  ASSERT_GE(shards[1].raw_data.bytes, 6000u);
  auto nginx = testing::NginxServer::Start(
      JoinPath(scratch.path(), "nginx"), nullptr,
      "location = /ds/" + shards[1].raw_data.basename + " { limit_rate 4k; }");
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const DatasetOptions o =
      MetricsOptions("http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds", cache.path());
  auto fetcher = StreamingDataset::Open(o);
  auto waiter = StreamingDataset::Open(o);
  ASSERT_TRUE(fetcher.ok() && waiter.ok());
  const uint64_t in_shard_1 = shards[0].samples;
  Status fetched = Status::Ok();
  std::thread fetch([&] {
    SampleFields f;
    fetched = (*fetcher)->Get(in_shard_1, &f);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  SampleFields f;
  Status got = (*waiter)->Get(in_shard_1, &f);
  fetch.join();
  ASSERT_TRUE(fetched.ok()) << fetched.ToString();
  ASSERT_TRUE(got.ok()) << got.ToString();
  DatasetMetrics m = (*waiter)->Metrics();
  EXPECT_EQ(m.downloads, 0u);  // the other reader's download served it
  EXPECT_EQ(m.cache_hits, 1u);
  EXPECT_GE(m.waits.peer_download_ns, 100'000'000u);
  EXPECT_GT(m.waits.peer_download_ns, m.waits.total_ns / 2);
  EXPECT_EQ(m.waits.download_ns, 0u);
  EXPECT_GE(m.cache_peer_fetch_wait_ns, m.waits.peer_download_ns);
  DatasetMetrics d = (*fetcher)->Metrics();
  EXPECT_EQ(d.downloads, 1u);
  EXPECT_GT(d.waits.download_ns, d.waits.total_ns / 2);
}

}  // namespace
}  // namespace sluice

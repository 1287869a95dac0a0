// The dataset's counters against jobs whose counts are known: a folder
// remote read once (every shard downloaded once, its bytes the files'),
// a real HTTP server behind a proxy that answers 503 twice (exact
// requests, retries and throttles for that host), and a cache limit that
// makes a reader wait for room another reader holds; the node's sums of
// processes' records (workers forked from one dataset, an ended process of
// another); the prefetch lead of a window the prefetcher filled, in each
// scope's window.
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
#include "engine/dataset/node_metrics.h"
#include "tests/common/scoped_env.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
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
  ScratchDir scratch, cache, state;
  testing::ScopedEnv state_dir("SLUICE_CACHE_STATE_DIR", state.path());
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
  // The node's sum has the same requests (from the dataset's open on).
  auto node = (*ds)->Metrics(MetricsScope::kNode);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->http_requests, files.count + 1);
  EXPECT_EQ(node->http_retries, 2u);
  EXPECT_EQ(node->http_throttles, 2u);
  // And the host's figures, histograms bucket for bucket.
  ASSERT_EQ(node->hosts.size(), 1u);
  const HostStatsSnapshot& n = node->hosts[0];
  EXPECT_EQ(n.host, host);
  EXPECT_EQ(n.requests, files.count + 1);
  EXPECT_EQ(n.attempts, files.count + 3);
  EXPECT_EQ(n.throttles_503, 2u);
  EXPECT_EQ(n.errors, h->errors);
  EXPECT_EQ(n.bytes, files.bytes + index_bytes);
  EXPECT_EQ(n.first_byte.buckets, h->first_byte.buckets);
  EXPECT_EQ(n.transfer.buckets, h->transfer.buckets);
  // The host's window: all of it in the first report, nothing in the next
  // (a second pass reads the cache).
  auto first = ParsePyJson((*ds)->MetricsReport());
  ASSERT_TRUE(first.ok());
  const JsonValue* window = JsonMember(*JsonMember(*JsonMember(*first, "hosts"), host), "window");
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "requests")->v),
            static_cast<int64_t>(files.count + 1));
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "retries")->v), 2);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "bytes")->v),
            static_cast<int64_t>(files.bytes + index_bytes));
  ReadAll(**ds, 1);
  auto second = ParsePyJson((*ds)->MetricsReport());
  ASSERT_TRUE(second.ok());
  window = JsonMember(*JsonMember(*JsonMember(*second, "hosts"), host), "window");
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "requests")->v), 0);
  EXPECT_EQ(std::get<double>(JsonMember(*window, "mb_per_s")->v), 0.0);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*JsonMember(*JsonMember(*second, "hosts"), host),
                                         "requests")->v),
            static_cast<int64_t>(files.count + 1));
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

// Every process's record summed once: two workers forked from one dataset
// (its job) and a process with a dataset of its own on the same cache
// folder (the node), all ended before the sums are taken.
TEST(DatasetMetricsMultiProcess, NodeAndJobTotalsSumEveryProcessOnce) {
  ScratchDir remote, cache, state;
  testing::ScopedEnv state_dir("SLUICE_CACHE_STATE_DIR", state.path());
  testing::WriteSyntheticMds(remote.path(), 300, 2000);
  const ShardFiles files = ShardsOf(remote.path());
  const DatasetOptions o = MetricsOptions(remote.path(), cache.path());
  uint64_t all_bytes = 0;
  {
    ScratchDir other_cache;
    auto plain = StreamingDataset::Open(MetricsOptions(remote.path(), other_cache.path()));
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    all_bytes = ReadAll(**plain, 0);
  }
  auto job = StreamingDataset::Open(o);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  // Workers of the job: each reads its half and _exits (the record of the
  // pass's end is all that is left of it).
  std::vector<pid_t> pids;
  for (int64_t w = 0; w < 2; ++w) {
    pids.push_back(testing::Fork([&, w] {
      if (!(*job)->IterBegin(0, 0, w, 2).ok()) return 2;
      std::vector<int64_t> ids(16);
      std::vector<SampleFields> out;
      for (;;) {
        auto n = (*job)->NextBatch(ids.size(), ids.data(), &out);
        if (!n.ok()) return 3;
        if (*n == 0) return 0;
      }
    }));
  }
  // Another dataset of the node: its record is written when it closes.
  pids.push_back(testing::Fork([&] {
    auto other = StreamingDataset::Open(o);
    if (!other.ok()) return 4;
    ReadAll(**other, 0);
    other->reset();
    return 0;
  }));
  for (pid_t p : pids) EXPECT_EQ(testing::WaitExit(p), 0);

  auto own = (*job)->Metrics(MetricsScope::kProcess);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->samples, 0u);
  auto in_job = (*job)->Metrics(MetricsScope::kJob);
  ASSERT_TRUE(in_job.ok()) << in_job.status().ToString();
  EXPECT_EQ(in_job->processes, 3u);  // this one and its two workers
  EXPECT_EQ(in_job->samples, 300u);
  EXPECT_EQ(in_job->bytes, all_bytes);
  for (int round = 0; round < 2; ++round) {  // summing again counts nobody twice
    auto node = (*job)->Metrics(MetricsScope::kNode);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    EXPECT_EQ(node->processes, 4u);
    EXPECT_EQ(node->samples, 600u);
    EXPECT_EQ(node->bytes, 2 * all_bytes);
    // One download per shard for the node, whoever made it; every other
    // open of a shard found it in the cache or waited for that download.
    EXPECT_EQ(node->downloads, files.count);
    EXPECT_EQ(node->shards_downloaded, files.count);
    EXPECT_EQ(node->bytes_downloaded, files.bytes);
    EXPECT_EQ(node->http_requests, 0u);  // a folder remote
    EXPECT_TRUE(node->hosts.empty());
  }
  // The job's report: its counts and the records summed.
  auto report = (*job)->MetricsReport(MetricsScope::kJob);
  ASSERT_TRUE(report.ok());
  auto parsed = ParsePyJson(*report);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(std::get<int64_t>(JsonMember(*parsed, "processes")->v), 3);
  const JsonValue* window = JsonMember(*parsed, "window");
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "samples")->v), 300);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "bytes")->v), static_cast<int64_t>(all_bytes));
  // The two workers read in the window (this process did not): its share
  // of time waited is per worker.
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "readers")->v), 2);
  EXPECT_DOUBLE_EQ(std::get<double>(JsonMember(*window, "wait_fraction")->v),
                   std::get<double>(JsonMember(*window, "wait_s")->v) /
                       std::get<double>(JsonMember(*window, "seconds")->v) / 2);
  // An unknown scope is refused by name.
  EXPECT_EQ(ParseMetricsScope("rank").status().ToString(),
            "invalid argument: metrics scope \"rank\": expected \"process\", \"job\" or "
            "\"node\"");
}

// Two workers forked from a dataset read over HTTP: the job's sum has the
// host once, with every request of the job (the index, read by the parent
// when it opened, and each shard once, by whichever worker opened it
// first), bucket counts that add up to them; no lead of ended workers.
TEST(DatasetMetricsMultiProcess, TheJobsHostsMergeTheWorkersRequests) {
  ScratchDir scratch, cache, state;
  testing::ScopedEnv state_dir("SLUICE_CACHE_STATE_DIR", state.path());
  auto nginx = testing::NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string data = JoinPath(nginx->www(), "ds");
  testing::WriteSyntheticMds(data, 300, 2000);
  const ShardFiles files = ShardsOf(data);
  const std::string host = "http://127.0.0.1:" + std::to_string(nginx->http_port());
  auto job = StreamingDataset::Open(MetricsOptions(host + "/ds", cache.path()));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::vector<pid_t> pids;
  for (int64_t w = 0; w < 2; ++w) {
    pids.push_back(testing::Fork([&, w] {
      if (!(*job)->IterBegin(0, 0, w, 2).ok()) return 2;
      std::vector<int64_t> ids(16);
      std::vector<SampleFields> out;
      for (;;) {
        auto n = (*job)->NextBatch(ids.size(), ids.data(), &out);
        if (!n.ok()) return 3;
        if (*n == 0) return 0;
      }
    }));
  }
  for (pid_t p : pids) EXPECT_EQ(testing::WaitExit(p), 0);
  auto in_job = (*job)->Metrics(MetricsScope::kJob);
  ASSERT_TRUE(in_job.ok()) << in_job.status().ToString();
  EXPECT_EQ(in_job->processes, 3u);
  ASSERT_EQ(in_job->hosts.size(), 1u);
  const HostStatsSnapshot& h = in_job->hosts[0];
  EXPECT_EQ(h.host, host);
  EXPECT_EQ(h.requests, files.count + 1);
  EXPECT_EQ(h.attempts, files.count + 1);
  EXPECT_EQ(h.failed, 0u);
  EXPECT_EQ(h.first_byte.count(), files.count + 1);
  EXPECT_EQ(h.transfer.count(), files.count + 1);
  EXPECT_EQ(in_job->http_requests, files.count + 1);
  // The workers have ended and this process read nothing: no lead is
  // ready now.
  EXPECT_EQ(in_job->prefetch_lead_samples, 0u);
  // The node's report shows the host with its percentiles.
  auto report = (*job)->MetricsReport(MetricsScope::kNode);
  ASSERT_TRUE(report.ok());
  auto parsed = ParsePyJson(*report);
  ASSERT_TRUE(parsed.ok());
  const JsonValue* reported = JsonMember(*JsonMember(*parsed, "hosts"), host);
  ASSERT_NE(reported, nullptr) << *report;
  EXPECT_EQ(std::get<int64_t>(JsonMember(*reported, "requests")->v),
            static_cast<int64_t>(files.count + 1));
  EXPECT_EQ(std::get<double>(JsonMember(*JsonMember(*reported, "transfer"), "p50_ms")->v),
            h.transfer.QuantileMicros(0.5) / 1000);
}

// A record is read back field by field, and a file that is not one is
// passed over.
TEST(DatasetMetrics, NodeRecordsRoundTripAndForeignFilesArePassedOver) {
  ScratchDir dir;
  DatasetMetrics m;
  uint64_t v = 1;
  for (CountField f : CountFields()) f(m) = v++;
  // A sum's HTTP totals are its hosts' (node_metrics.h): one host has them.
  HostStatsSnapshot host;
  host.host = "http://127.0.0.1:81";
  host.requests = m.http_requests;
  host.retries = m.http_retries;
  host.throttles_429 = m.http_throttles;
  m.hosts = {host};
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 7, m).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "junk.rec"), "SLNODE01short").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "notes.txt"), "x").ok());
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 1u);
  v = 1;
  for (CountField f : CountFields()) EXPECT_EQ(f(*sum), v++);
  auto other = SumNodeRecords(dir.path(), uint64_t{8});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->processes, 0u);
  EXPECT_EQ(other->samples, 0u);
}

// A sequential read of 300 samples whose window is the whole dataset: once
// the prefetcher has opened every shard, each batch of one sample leaves
// the rest of the epoch ready and every shard open (the consumer moves less
// than a quarter window, so none is dropped): exact leads.
struct FilledWindow {
  ScratchDir remote, cache;
  ShardFiles files;
  std::unique_ptr<StreamingDataset> ds;
  uint64_t pos = 0;  // samples read
  std::vector<int64_t> ids = std::vector<int64_t>(1);
  std::vector<SampleFields> out;

  void Next() {
    auto n = ds->NextBatch(1, ids.data(), &out);
    EXPECT_TRUE(n.ok() && *n == 1);
    ++pos;
  }
  // Opens the dataset, reads a sample, waits (without reading) for the
  // prefetcher to fill the window, then reads until a batch sees it all
  // open (its last opens are maps of files already there).
  void Fill() {
    testing::WriteSyntheticMds(remote.path(), 300, 2000);
    files = ShardsOf(remote.path());
    DatasetOptions o = MetricsOptions(remote.path(), cache.path());
    o.predownload = 300;
    o.fetch_concurrency = 1;
    o.plan.shuffle = false;
    auto opened = StreamingDataset::Open(o);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    ds = std::move(*opened);
    ASSERT_TRUE(ds->IterBegin(0, 0, 0, 1).ok());
    Next();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (testing::ShardBytesOnDisk(cache.path()) < files.bytes &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (;;) {
      DatasetMetrics m = ds->Metrics();
      if (m.prefetch_lead_shards == files.count) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "never saw every shard open";
      ASSERT_LT(pos, 40u) << "the window was not filled in time";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      Next();
    }
  }
};

int64_t IntMember(const JsonValue& v, const char* section, const char* name) {
  return std::get<int64_t>(JsonMember(*JsonMember(v, section), name)->v);
}

// Exact leads, their min and mean, of a window of five batches.
TEST(DatasetMetrics, ThePrefetchLeadOfAFilledWindowIsExact) {
  FilledWindow f;
  ASSERT_NO_FATAL_FAILURE(f.Fill());
  const uint64_t& pos = f.pos;
  const ShardFiles& files = f.files;
  EXPECT_EQ(f.ds->Metrics().prefetch_lead_samples, 300 - pos);
  f.ds->MetricsReport();  // a window of the next five batches alone
  for (int k = 0; k < 5; ++k) f.Next();
  auto report = ParsePyJson(f.ds->MetricsReport());
  ASSERT_TRUE(report.ok());
  const JsonValue* totals = JsonMember(*report, "totals");
  const JsonValue* window = JsonMember(*report, "window");
  EXPECT_EQ(std::get<int64_t>(JsonMember(*totals, "prefetch_lead_samples")->v),
            static_cast<int64_t>(300 - pos));
  EXPECT_EQ(std::get<int64_t>(JsonMember(*totals, "prefetch_lead_shards")->v),
            static_cast<int64_t>(files.count));
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "batches")->v), 5);
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "prefetch_lead_samples_min")->v),
            static_cast<int64_t>(300 - pos));
  // Leads 300 - pos + 4 ... 300 - pos: their mean is 300 - pos + 2.
  EXPECT_EQ(std::get<double>(JsonMember(*window, "prefetch_lead_samples_mean")->v),
            static_cast<double>(300 - pos + 2));
  EXPECT_EQ(std::get<int64_t>(JsonMember(*window, "prefetch_lead_shards_min")->v),
            static_cast<int64_t>(files.count));
  EXPECT_EQ(std::get<double>(JsonMember(*window, "prefetch_lead_shards_mean")->v),
            static_cast<double>(files.count));
}

// The job's and node's windows (summed from the records) have the least
// lead of their own batches: the first window's is that of the batches
// read while the prefetcher filled the window, the next window's that of
// its five batches alone (the totals' least stays the first).
TEST(DatasetMetrics, AJobOrNodeWindowsLeastLeadIsThatOfItsOwnBatches) {
  ScratchDir state;
  testing::ScopedEnv state_dir("SLUICE_CACHE_STATE_DIR", state.path());
  FilledWindow f;
  ASSERT_NO_FATAL_FAILURE(f.Fill());
  for (MetricsScope scope : {MetricsScope::kProcess, MetricsScope::kJob, MetricsScope::kNode}) {
    auto first = f.ds->MetricsReport(scope);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto parsed = ParsePyJson(*first);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(IntMember(*parsed, "window", "batches"), static_cast<int64_t>(f.pos));
    EXPECT_EQ(IntMember(*parsed, "window", "prefetch_lead_samples_min"),
              static_cast<int64_t>(f.ds->Metrics().lead_samples_min))
        << static_cast<int>(scope);
  }
  const int64_t first_least = static_cast<int64_t>(f.ds->Metrics().lead_samples_min);
  ASSERT_LT(first_least, static_cast<int64_t>(300 - f.pos - 5));  // the filling batches'
  for (int k = 0; k < 5; ++k) f.Next();
  for (MetricsScope scope : {MetricsScope::kProcess, MetricsScope::kJob, MetricsScope::kNode}) {
    auto report = f.ds->MetricsReport(scope);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    auto parsed = ParsePyJson(*report);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(IntMember(*parsed, "window", "batches"), 5);
    EXPECT_EQ(IntMember(*parsed, "window", "prefetch_lead_samples_min"),
              static_cast<int64_t>(300 - f.pos))
        << static_cast<int>(scope);
    EXPECT_EQ(IntMember(*parsed, "window", "prefetch_lead_shards_min"),
              static_cast<int64_t>(f.files.count));
    EXPECT_EQ(IntMember(*parsed, "totals", "prefetch_lead_samples_min"), first_least);
  }
  // A window without batches has none.
  auto empty = ParsePyJson(*f.ds->MetricsReport(MetricsScope::kJob));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(IntMember(*empty, "window", "batches"), 0);
  EXPECT_EQ(IntMember(*empty, "window", "prefetch_lead_samples_min"), 0);
}

}  // namespace
}  // namespace sluice

// Serving from bytes in flight (DatasetOptions::serve_in_flight): while a
// shard's download is held mid-body by the server, the consumer gets the
// samples whose bytes have arrived, exactly and in plan order; when that
// download then fails, the consumer gets an error naming the shard and its
// URL, and nothing of the shard stays in the cache; a pass whose last
// samples came in flight ends with that download's failure, not before it
// (EndAfterFlight). Only remotes that report their fills are served so. A
// shard served in flight counts once: one download, its bytes once, no
// cache hit for the consumer's own download (a real nginx, cold then warm).
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/sample_peek.h"
#include "engine/dataset/stream_shards.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/base/fault_env.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/stalling_file_server.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::StallingFileServer;

// Every file under `dir`, recursively, relative to it.
std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_directory()) out.push_back(std::filesystem::relative(e.path(), dir).string());
  }
  return out;
}

struct HeldShard {
  ScratchDir remote, cache;
  std::unique_ptr<DatasetReader> reader;
  std::string shard0;  // its basename
  std::unique_ptr<StallingFileServer> server;  // holds shard0 (OpenHeld)
  std::unique_ptr<StreamingDataset> ds;        // reads it in order from `server`
};

// A dataset of one large enough first shard, read in order from a server
// that sends the first half of shard 0's body, then holds it until Stop.
// The HTTP client hands a body on to the file 2 MiB at a time
// (kBodyBufferBytes): the first half must hold at least that.
void MakeHeld(HeldShard* h) {
  testing::WriteSyntheticMds(h->remote.path(), 50000, uint64_t{64} << 20);
  auto reader = DatasetReader::Open(h->remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  h->reader = std::move(*reader);
  h->shard0 = h->reader->index().shards[0].raw_data.basename;
  // Its first 2 MiB hold far more than the 100 samples read below
  // (samples of 40..250 bytes after a 200 KB offsets table).
  ASSERT_GT(h->reader->index().shards[0].raw_data.bytes, uint64_t{5} << 20);
}

DatasetOptions HeldOptions(const HeldShard& h, const std::string& url, bool serve_in_flight) {
  DatasetOptions o = testing::OneStreamOptions(h.remote.path(), h.cache.path());
  o.streams[0].remote = url;
  o.streams[0].download_retry = 0;
  o.plan.shuffle = false;
  o.peek_first_sample = false;  // the server ignores Range: no peek either way
  o.serve_in_flight = serve_in_flight;
  return o;
}

// MakeHeld, then its server and a dataset iterating it from there, its
// files through `env`.
void OpenHeld(HeldShard* h, bool serve_in_flight, Env* env = Env::Default()) {
  ASSERT_NO_FATAL_FAILURE(MakeHeld(h));
  h->server = std::make_unique<StallingFileServer>(h->remote.path(), h->shard0);
  DatasetOptions o = HeldOptions(*h, h->server->url(), serve_in_flight);
  o.env = env;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  h->ds = std::move(*ds);
  ASSERT_TRUE(h->ds->IterBegin(0, 0, 0, 1).ok());
}

// Reads `count` samples from `ds` while its shard 0 is held mid-body by
// `h`'s server: every one came from the download in flight. Checks their
// ids against `plan` (from its start) and their bytes against the reader's,
// and that the shard is not in the cache yet.
void ReadWhileHeld(HeldShard& h, StreamingDataset& ds, const std::vector<int64_t>& plan,
                   size_t count) {
  std::vector<int64_t> got;
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  while (got.size() < count) {
    const size_t want = std::min<size_t>(16, count - got.size());
    Result<size_t> n = ds.NextBatch(want, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << "after " << got.size() << " samples: " << n.status().ToString();
    ASSERT_GE(*n, 1u);
    for (size_t k = 0; k < *n; ++k) {
      SampleFields reference;
      ASSERT_TRUE(h.reader->Read(static_cast<uint64_t>(ids[k]), &reference).ok());
      ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(reference)) << ids[k];
      EXPECT_EQ(fields[k].where.shard, 0u);
      got.push_back(ids[k]);
    }
  }
  EXPECT_EQ(got, std::vector<int64_t>(plan.begin(), plan.begin() + static_cast<ptrdiff_t>(count)));
  EXPECT_FALSE(FileExists(JoinPath(h.cache.path(), h.shard0)));
}

TEST(ServeInFlight, SamplesBeforeTheHoldComeExactlyAndInOrderThenTheFailureNamesShardAndUrl) {
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(OpenHeld(&h, true));
  StallingFileServer& server = *h.server;

  // The server holds shard 0 half sent until Stop below: every sample
  // handed out before then came from the download in flight.
  std::vector<int64_t> in_order(100);
  std::iota(in_order.begin(), in_order.end(), 0);
  ASSERT_NO_FATAL_FAILURE(ReadWhileHeld(h, *h.ds, in_order, 100));

  // The download fails mid-shard: the consumer hears of it, naming the
  // shard and where it came from, and the cache keeps nothing of it.
  server.Stop();
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  Status failed = Status::Ok();
  for (int calls = 0; calls < 4000 && failed.ok(); ++calls) {
    Result<size_t> n = h.ds->NextBatch(16, ids.data(), &fields);
    if (!n.ok()) failed = n.status();
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find(h.shard0), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find(server.url()), std::string::npos) << failed.ToString();
  for (const std::string& f : FilesUnder(h.cache.path())) {
    EXPECT_EQ(f.find(h.shard0), std::string::npos) << f;
  }
}

// A resumed epoch (IterBegin at sample 1,000 of the pass, as a restarted
// job's load_state_dict does) is served in flight as a pass from its start
// is: its samples 1,000-1,099 (within the first 2 MiB of shard 0 that the
// server sends before holding the body) come exactly and in plan order
// while the download is held.
TEST(ServeInFlight, AResumedEpochIsServedFromTheDownloadInFlight) {
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(MakeHeld(&h));
  h.server = std::make_unique<StallingFileServer>(h.remote.path(), h.shard0);
  auto ds = StreamingDataset::Open(HeldOptions(h, h.server->url(), true));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto plan = (*ds)->WorkerIds(0, 1000, 0, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_GE(plan->size(), 100u);
  EXPECT_EQ((*plan)[0], 1000);
  ASSERT_TRUE((*ds)->IterBegin(0, 1000, 0, 1).ok());
  ASSERT_NO_FATAL_FAILURE(ReadWhileHeld(h, **ds, *plan, 100));
  h.server->Stop();
}

// A shuffled pass's window over a shard in flight: its first samples, in
// the shuffled plan's order, that lie within the first 2 MiB of shard 0
// (the server then holds the body; the client hands the file its first 2
// MiB buffer, less the response head) come exactly while the download is
// held. One 8 MB shard of 50,000 samples: its first 2 MiB hold about a
// quarter of them, so the seed is the first of 1-300 whose plan starts
// with at least 3 such samples (the synthetic dataset is the same every
// run, and so is that seed).
TEST(ServeInFlight, AShuffledWindowIsServedFromTheDownloadInFlight) {
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(MakeHeld(&h));
  ASSERT_EQ(h.reader->index().shards.size(), 1u);
  auto bytes = ReadFile(JoinPath(h.remote.path(), h.shard0));
  ASSERT_TRUE(bytes.ok());
  // MDS: the sample count, then its offsets (u32 each, little-endian).
  auto offset = [&](size_t i) {
    uint32_t v = 0;
    std::memcpy(&v, bytes->data() + 4 + 4 * i, 4);
    return uint64_t{v};
  };
  const uint64_t arrived = (uint64_t{2} << 20) - (uint64_t{64} << 10);
  h.server = std::make_unique<StallingFileServer>(h.remote.path(), h.shard0);
  DatasetOptions o = HeldOptions(h, h.server->url(), true);
  o.plan.shuffle = true;
  std::vector<int64_t> plan;
  size_t window = 0;
  for (uint64_t seed = 1; seed <= 300 && window < 3; ++seed) {
    o.plan.shuffle_seed = seed;
    auto planner = StreamingDataset::Open(o);
    ASSERT_TRUE(planner.ok()) << planner.status().ToString();
    auto ids = (*planner)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    plan = *ids;
    window = 0;
    while (window < plan.size() && window < 16 &&
           offset(static_cast<size_t>(plan[window]) + 1) <= arrived) {
      ++window;
    }
  }
  ASSERT_GE(window, 3u) << "no seed of 1-300 starts with 3 samples in the first 2 MiB";
  bool in_order = true;  // a window of 0, 1, 2, ... would test nothing shuffled
  for (size_t k = 0; k < window; ++k) in_order = in_order && plan[k] == static_cast<int64_t>(k);
  ASSERT_FALSE(in_order);
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  ASSERT_NO_FATAL_FAILURE(ReadWhileHeld(h, **ds, plan, window));
  h.server->Stop();
}

// EndAfterFlight: a pass whose last samples were all served from a
// download in flight does not end before that download does, and the
// download's failure is the pass's. Rank 0 of 8 nodes reads in order the
// first eighth of the one shard, all of it within the first 2 MiB the
// server sends before it holds the body; the server then cuts the body
// (closes mid-shard) after the consumer had the pass's last sample. The
// call after it gets the download's failure, naming the shard and its URL,
// instead of the pass's end; the cache keeps nothing of the shard; the
// counters say: every sample of the pass handed out, one request for the
// shard, one failed download and nothing downloaded, cached or hit.
TEST(ServeInFlight, APassWhoseLastSamplesCameInFlightEndsWithTheFailureOfTheirDownload) {
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(MakeHeld(&h));
  ASSERT_EQ(h.reader->index().shards.size(), 1u);
  h.server = std::make_unique<StallingFileServer>(h.remote.path(), h.shard0);
  StallingFileServer& server = *h.server;
  DatasetOptions o = HeldOptions(h, server.url(), true);
  o.world.rank = 0;
  o.world.world_size = 8;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  h.ds = std::move(*ds);
  ASSERT_TRUE(h.ds->IterBegin(0, 0, 0, 1).ok());

  // Node 0's contiguous eighth, in order: samples [0, 6250), whose bytes
  // end far inside the first 2 MiB of the shard (a 200 KB offsets table,
  // then samples of at most 270 bytes).
  constexpr int64_t kPass = 50000 / 8;
  std::vector<int64_t> ids(64);
  std::vector<SampleFields> fields;
  int64_t next = 0;
  while (next < kPass) {
    Result<size_t> n = h.ds->NextBatch(ids.size(), ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << "after " << next << " samples: " << n.status().ToString();
    ASSERT_GE(*n, 1u) << "after " << next << " samples";
    for (size_t k = 0; k < *n; ++k) {
      ASSERT_EQ(ids[k], next) << k;
      SampleFields want;
      ASSERT_TRUE(h.reader->Read(static_cast<uint64_t>(ids[k]), &want).ok());
      ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(want)) << ids[k];
      ++next;
    }
  }
  ASSERT_EQ(next, kPass);
  // Every sample came from the download the server still holds.
  EXPECT_FALSE(FileExists(JoinPath(h.cache.path(), h.shard0)));

  server.Stop();  // the body cut mid-shard: the download fails
  Result<size_t> end = h.ds->NextBatch(ids.size(), ids.data(), &fields);
  ASSERT_FALSE(end.ok()) << "the pass ended with " << *end << " samples, not its download's failure";
  const std::string message = end.status().ToString();
  EXPECT_NE(message.find("fetching shard 0 '" + h.shard0 + "': downloading " + server.url() + "/" +
                         h.shard0),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("connection closed before the end of the body"), std::string::npos) << message;
  for (const std::string& f : FilesUnder(h.cache.path())) {
    EXPECT_EQ(f.find(h.shard0), std::string::npos) << f;
  }
  std::vector<std::string> asked;
  for (const std::string& t : server.Requests()) {
    if (t == "/" + h.shard0) asked.push_back(t);
  }
  EXPECT_EQ(asked.size(), 1u);
  const DatasetMetrics m = h.ds->Metrics();
  EXPECT_EQ(m.samples, static_cast<uint64_t>(kPass));
  EXPECT_EQ(m.downloads, 0u);
  EXPECT_EQ(m.download_errors, 1u);
  EXPECT_EQ(m.bytes_downloaded, 0u);
  EXPECT_EQ(m.shards_downloaded, 0u);
  EXPECT_EQ(m.cache_hits, 0u);
}

// The strict mode: nothing is handed out before the whole shard is in. The
// first call waits for shard 0; the server stops once it has been asked
// for it (its first half sent or on the way), so the download fails: the
// call's answer is that failure, never a sample of the shard.
TEST(ServeInFlight, StrictModeHandsOutNothingOfAShardThatFails) {
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(OpenHeld(&h, false));
  StallingFileServer& server = *h.server;
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  auto call = std::async(std::launch::async, [&] { return h.ds->NextBatch(16, ids.data(), &fields); });
  auto asked = [&] {
    for (const std::string& t : server.Requests()) {
      if (t == "/" + h.shard0) return true;
    }
    return false;
  };
  while (!asked()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server.Stop();
  Result<size_t> n = call.get();
  ASSERT_FALSE(n.ok()) << *n << " samples handed out";
  EXPECT_NE(n.status().message().find(h.shard0), std::string::npos) << n.status().ToString();
}

// The download in flight is read through the dataset's Env (a FaultEnv
// here): a read of the cache's temporary that the disk fails is the
// consumer's error, naming the temporary and the shard's URL; the shard's
// download then fails too (its server stops mid-body) and the cache keeps
// nothing of the shard.
TEST(ServeInFlight, AFailedReadOfTheDownloadInFlightIsAnErrorNamingTheFileAndTheCacheKeepsNothing) {
  testing::FaultEnv env;
  HeldShard h;
  ASSERT_NO_FATAL_FAILURE(OpenHeld(&h, true, &env));
  env.Add({.op = testing::FsOp::kRead, .path_pattern = "*/." + h.shard0 + ".sluice-tmp.*",
           .nth = 1, .times = 0, .err = EIO});
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  Result<size_t> n = h.ds->NextBatch(16, ids.data(), &fields);
  ASSERT_FALSE(n.ok()) << *n << " samples handed out";
  ASSERT_GE(env.fired(), 1);
  const std::string tmp = env.last_fired_path();
  EXPECT_EQ(tmp.rfind(h.cache.path() + "/." + h.shard0 + ".sluice-tmp.", 0), 0u) << tmp;
  const std::string message = n.status().ToString();
  EXPECT_NE(message.find("reading the download in flight of " + h.server->url() + "/" + h.shard0 +
                         ": cannot read " + tmp + ": Input/output error"),
            std::string::npos)
      << message;
  h.server->Stop();
  h.ds.reset();  // its download's end joined
  for (const std::string& f : FilesUnder(h.cache.path())) {
    EXPECT_EQ(f.find(h.shard0), std::string::npos) << f;
  }
}

// Only a remote whose downloads report each write as it completes (the
// HTTP stores) is served in flight: a plain folder, and file://, copy a
// shard whole, so their fill would move only at its end and a consumer
// reading it would wait on the whole shard outside the cache's accounting
// (CacheLimit's tests use a folder remote).
TEST(ServeInFlight, OnlyARemoteThatReportsItsFillsIsServedInFlight) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 300, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto table = ShardTable::FromIndex((*reader)->index());
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto shared = std::make_shared<const ShardTable>(std::move(*table));
  StallingFileServer server(remote.path(), "none");
  for (const auto& [url, reports] : std::vector<std::pair<std::string, bool>>{
           {remote.path(), false}, {"file://" + remote.path(), false}, {server.url(), true}}) {
    SCOPED_TRACE(url);
    auto source = OpenRemoteSource(url);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    EXPECT_EQ((*source)->ReportsFills(), reports);
    StreamOptions stream;
    stream.remote = url;
    stream.local = cache.path();
    auto shards = StreamShards::Open(stream, shared, std::move(*source), std::nullopt,
                                     std::chrono::seconds(20));
    ASSERT_TRUE(shards.ok()) << shards.status().ToString();
    EXPECT_FALSE((*shards)->MayServeInFlight(0));  // not asked to
    (*shards)->ServeInFlight();
    EXPECT_EQ((*shards)->MayServeInFlight(0), reports);
  }
}

// With serve_in_flight on, the first shard still downloading when the
// plan is in (nginx sends its first 2.5 MB at once, then 2 MB/s) is read
// in flight by the consumer while the prefetcher's open of it waits on
// that same download: one open, so the cold pass counts each shard as
// exactly one download and no cache hit, and its bytes once; the warm pass
// over the same cache counts each shard as one hit and downloads nothing.
// nginx's log says each shard was asked for once, whole.
TEST(ServeInFlight, AShardServedInFlightCountsAsOneDownloadAndNoHitColdThenOneHitWarm) {
  ScratchDir scratch, cache;
  const std::string www = JoinPath(scratch.path(), "nginx");
  const std::string data = JoinPath(www, "www/ds");
  testing::WriteSyntheticMds(data, 60000, uint64_t{4} << 20);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::vector<ShardEntry>& shards = (*reader)->index().shards;
  ASSERT_GE(shards.size(), 2u);
  ASSERT_GT(shards[0].raw_data.bytes, uint64_t{3} << 20);
  uint64_t stored = 0;
  for (const ShardEntry& e : shards) stored += e.raw_data.bytes;
  auto nginx = testing::NginxServer::Start(
      www, nullptr,
      "location = /ds/" + shards[0].raw_data.basename + " { limit_rate_after 2500k; limit_rate 2m; }");
  if (nginx == nullptr) GTEST_SKIP() << "nginx did not start (is it installed?)";
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds";
  DatasetOptions o = testing::OneStreamOptions(url, cache.path());
  o.plan.shuffle = false;
  o.serve_in_flight = true;

  for (const bool cold : {true, false}) {
    SCOPED_TRACE(cold ? "cold" : "warm");
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
    std::vector<int64_t> ids(64);
    std::vector<SampleFields> fields;
    int64_t next = 0;
    for (;;) {
      Result<size_t> n = (*ds)->NextBatch(ids.size(), ids.data(), &fields);
      ASSERT_TRUE(n.ok()) << "after " << next << " samples: " << n.status().ToString();
      if (*n == 0) break;
      for (size_t k = 0; k < *n; ++k) ASSERT_EQ(ids[k], next++);
    }
    ASSERT_EQ(next, 60000);
    const DatasetMetrics m = (*ds)->Metrics();
    EXPECT_EQ(m.downloads, cold ? shards.size() : 0u);
    EXPECT_EQ(m.shards_downloaded, cold ? shards.size() : 0u);
    EXPECT_EQ(m.bytes_downloaded, cold ? stored : 0u);
    EXPECT_EQ(m.cache_hits, cold ? 0u : shards.size());
  }
  // Each shard asked for once from its start (the download: a GET of its
  // first 8 MiB, here all of it); the first sample's head, read on a guess
  // beside the cold pass's index.json (guess_first_shard: bytes 0 through
  // GuessedHeadBytes, the peek's read, not a download), aside.
  const std::string guess = "bytes=0-" + std::to_string(GuessedHeadBytes() - 1);
  std::istringstream log(nginx->AccessLog());
  std::map<std::string, int> from_start;
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    std::string connection, method, uri, status, range;
    fields >> connection >> method >> uri >> status >> range;
    if (range.rfind("bytes=0-", 0) == 0 && range != guess) ++from_start[uri];
  }
  for (const ShardEntry& e : shards) {
    EXPECT_EQ(from_start["/ds/" + e.raw_data.basename], 1) << e.raw_data.basename << "\n" << nginx->AccessLog();
  }
}

}  // namespace
}  // namespace sluice

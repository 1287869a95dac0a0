// Shards read in order from a remote: the reader keeps fetch_concurrency
// shards downloading at once, counted at the server, under a cache_limit
// too (as many as fit).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/stalling_file_server.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::StallingFileServer;

// The shard files the server was asked for, sorted, once `want` of them
// were (or after 10 s), and a pause in which an extra request would show.
std::vector<std::string> ShardRequestsAfter(const StallingFileServer& server, size_t want) {
  auto shards = [&] {
    std::vector<std::string> out;
    for (const std::string& t : server.Requests()) {
      if (t.size() > 4 && t.compare(t.size() - 4, 4, ".mds") == 0) out.push_back(t);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (shards().size() < want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return shards();
}

// Shard 1's download hangs mid-body, so the reader cannot get past shard
// 0's samples; `fetch_concurrency` unset (the default) or given. With
// `limit`, a cache_limit of that many bytes and a window of the whole
// epoch; `sizes` gets the shard sizes.
std::vector<std::string> ShardsRequestedWhileTheSecondHangs(
    std::optional<int64_t> fetch_concurrency, size_t want, std::vector<std::string>* names,
    std::optional<uint64_t> limit = std::nullopt, std::vector<uint64_t>* sizes = nullptr) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 400, 4000);
  auto reader = DatasetReader::Open(remote.path());
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return {};
  for (const ShardEntry& e : (*reader)->index().shards) {
    names->push_back("/" + e.raw_data.basename);
    if (sizes) sizes->push_back(e.raw_data.bytes);
  }
  EXPECT_GE(names->size(), 6u);
  StallingFileServer server(remote.path(), (*reader)->index().shards[1].raw_data.basename);

  DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
  o.streams[0].remote = server.url();
  o.streams[0].download_retry = 0;
  // Shard requests are counted: a first-sample peek would be one more (as
  // this server ignores Range, one the peek drops after the response head:
  // see GetRangeOnly).
  o.peek_first_sample = false;
  o.predownload = limit ? 400 : 8;
  o.fetch_concurrency = fetch_concurrency;
  o.cache_limit = limit;
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return {};
  EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  auto read = std::async(std::launch::async, [&]() -> Result<size_t> {
    std::vector<int64_t> ids(8);
    std::vector<SampleFields> fields;
    size_t total = 0;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(size_t n, (*ds)->NextBatch(8, ids.data(), &fields));
      if (n == 0) return total;
      total += n;
    }
  });
  std::vector<std::string> requested = ShardRequestsAfter(server, want);
  EXPECT_EQ(read.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the epoch ended without shard 1";
  server.Stop();  // the hung download fails, and with it the reading
  EXPECT_FALSE(read.get().ok());
  return requested;
}

TEST(ShardsInFlight, FourShardsDownloadAtOnceByDefault) {
  std::vector<std::string> names;
  std::vector<std::string> requested = ShardsRequestedWhileTheSecondHangs(std::nullopt, 5, &names);
  ASSERT_GE(names.size(), 6u);
  // Shard 0 first, alone; then shard 1 hangs, and 2..4 came while it did,
  // and nothing past them: four downloads were under way at once, as many
  // as fetch_concurrency's default, and no more while the reader waits.
  EXPECT_EQ(requested, std::vector<std::string>(names.begin(), names.begin() + 5));
}

TEST(ShardsInFlight, FetchConcurrencyOneDownloadsOneShardAtATime) {
  std::vector<std::string> names;
  std::vector<std::string> requested = ShardsRequestedWhileTheSecondHangs(1, 2, &names);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(requested, std::vector<std::string>(names.begin(), names.begin() + 2));
}

// Two at once: the reader's helper takes shard 1 (beyond the window) and
// hangs on it; when the reader reaches shard 1 it does not wait idle for
// the helper but downloads shard 2 beside it, and no more (two in flight).
TEST(ShardsInFlight, FetchConcurrencyTwoDownloadsTheNextShardWhileItsHelperHangs) {
  std::vector<std::string> names;
  std::vector<std::string> requested = ShardsRequestedWhileTheSecondHangs(2, 3, &names);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(requested, std::vector<std::string>(names.begin(), names.begin() + 3));
}

// With two at once (the reader opening what its helper would), in order and
// shuffled, the epoch is the planned ids with the remote's bytes, and every
// shard is downloaded once.
TEST(ShardsInFlight, FetchConcurrencyTwoReadsTheEpochExactlyDownloadingEachShardOnce) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 400, 4000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::string> names;
  for (const ShardEntry& e : (*reader)->index().shards) names.push_back("/" + e.raw_data.basename);
  ASSERT_GE(names.size(), 6u);
  for (bool shuffle : {false, true}) {
    SCOPED_TRACE(shuffle ? "shuffled" : "in order");
    ScratchDir cache;
    StallingFileServer server(remote.path(), "no file stalls");
    DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
    o.streams[0].remote = server.url();
    // Shard requests are counted: a first-sample peek would be one more (as
    // this server ignores Range, one the peek drops after the response head:
    // see GetRangeOnly).
    o.peek_first_sample = false;
    o.predownload = 8;
    o.fetch_concurrency = 2;
    o.plan.shuffle = shuffle;
    o.plan.shuffle_seed = 5;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto plan = (*ds)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 8, &bytes);
    ASSERT_EQ(ids, *plan);
    ASSERT_EQ(ids.size(), 400u);
    SampleFields f;
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*reader)->Read(static_cast<uint64_t>(ids[i]), &f).ok());
      ASSERT_EQ(bytes[i], testing::FieldBytes(f)) << ids[i];
    }
    EXPECT_EQ(ShardRequestsAfter(server, names.size()),
              (std::vector<std::string>(names.begin(), names.end())));
  }
}

// Under a cache_limit that holds the whole window (here the epoch), every
// shard of the window downloads while shard 1 hangs, beside it.
TEST(ShardsInFlight, UnderACacheLimitWithRoomTheWindowDownloadsBesideAHungShard) {
  std::vector<std::string> names;
  ShardsRequestedWhileTheSecondHangs(1, 2, &names);  // learns the shard names
  ASSERT_GE(names.size(), 6u);
  const std::vector<std::string> all = names;
  names.clear();
  std::vector<std::string> requested =
      ShardsRequestedWhileTheSecondHangs(std::nullopt, all.size(), &names, uint64_t{1} << 30);
  EXPECT_EQ(requested, all);
}

// Under a cache_limit with room for three shards, with two at once (one
// helper beside the reader's own open, so the order of their claims on the
// room is fixed): while shard 1 hangs (its room reserved), shard 2
// downloads beside it, and shard 3 once the reader has passed shard 0
// (evicted for it); shard 4 would pass the limit, so it is never asked for.
TEST(ShardsInFlight, ExtraShardsUnderACacheLimitDownloadOnlyWhileThereIsRoom) {
  // The sizes are known only once the dataset is written: first a dry run
  // to learn them (no limit), then the limit from them.
  std::vector<std::string> names;
  std::vector<uint64_t> s;
  ShardsRequestedWhileTheSecondHangs(1, 2, &names, std::nullopt, &s);
  ASSERT_GE(s.size(), 6u);
  const uint64_t limit = std::max(s[0] + s[1] + s[2], s[1] + s[2] + s[3]);
  ASSERT_GT(s[1] + s[2] + s[3] + s[4], limit);
  names.clear();
  std::vector<std::string> requested =
      ShardsRequestedWhileTheSecondHangs(2, 4, &names, limit);
  EXPECT_EQ(requested, std::vector<std::string>(names.begin(), names.begin() + 4));
}

// A raw-file stream of `n` small files over the stalling server (a manifest
// with sizes: no HEAD requests), read by worker 0 of `num_workers` (one
// rank), the second file of its order hanging mid-body: under `limit` with
// a window of all files, or without a limit with a window of one file
// (then the look-ahead keeps fetch_concurrency files opening). Returns
// the files requested while it hangs (once `want` were, or after 10 s),
// sorted; `names` gets the request paths of worker 0's files in its
// order, `max_disk` the most bytes seen in the cache folder meanwhile.
std::vector<std::string> FilesRequestedWhileTheSecondHangs(int n, std::optional<uint64_t> limit,
                                                           size_t want,
                                                           std::vector<std::string>* names,
                                                           uint64_t* max_disk,
                                                           int64_t num_workers = 1) {
  ScratchDir remote, cache;
  std::string manifest;
  for (int i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "f%03d.bin", i);
    const std::string bytes(static_cast<size_t>(1000 + 10 * i), static_cast<char>('a' + i % 26));
    EXPECT_TRUE(WriteFileAtomic(JoinPath(remote.path(), name), bytes).ok());
    manifest += "{\"path\": \"" + std::string(name) + "\", \"size\": " +
                std::to_string(bytes.size()) + "}\n";
    names->push_back("/" + std::string(name));
  }
  EXPECT_TRUE(WriteFileAtomic(JoinPath(remote.path(), "files.txt"), manifest).ok());
  DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
  o.streams[0].download_retry = 0;
  o.streams[0].files.emplace();
  o.streams[0].files->manifest = "files.txt";
  o.predownload = limit ? n : 1;
  o.cache_limit = limit;
  // Worker 0's order, from a first look through a server that stalls
  // nothing: its files by request path, the second of them to hang.
  std::vector<std::string> order;
  {
    StallingFileServer look(remote.path(), "none");
    o.streams[0].remote = look.url();
    auto ds = StreamingDataset::Open(o);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return {};
    auto ids = (*ds)->WorkerIds(0, 0, 0, num_workers);
    EXPECT_TRUE(ids.ok() && ids->size() >= 2u);
    if (!ids.ok() || ids->size() < 2u) return {};
    for (int64_t id : *ids) order.push_back((*names)[static_cast<size_t>(id)]);
  }
  *names = order;
  StallingFileServer server(remote.path(), order[1].substr(1));
  o.streams[0].remote = server.url();
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return {};
  testing::DiskSampler sampler({{cache.path()}});
  EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, num_workers).ok());
  auto read = std::async(std::launch::async, [&]() -> Result<size_t> {
    std::vector<int64_t> ids(4);
    std::vector<SampleFields> fields;
    size_t total = 0;
    while (true) {
      SLUICE_ASSIGN_OR_RETURN(size_t k, (*ds)->NextBatch(4, ids.data(), &fields));
      if (k == 0) return total;
      total += k;
    }
  });
  auto files = [&] {
    std::vector<std::string> out;
    for (const std::string& t : server.Requests()) {
      if (t.size() > 4 && t.compare(t.size() - 4, 4, ".bin") == 0) out.push_back(t);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (files().size() < want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<std::string> requested = files();
  EXPECT_EQ(read.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the epoch ended without file 1";
  server.Stop();
  EXPECT_FALSE(read.get().ok());
  sampler.Stop();
  *max_disk = sampler.max();
  return requested;
}

// Small files under a cache_limit with room for them all: every file of
// the window downloads while file 1 hangs (one at a time before).
TEST(FilesInFlight, UnderACacheLimitWithRoomEveryFileOfTheWindowDownloads) {
  std::vector<std::string> names;
  uint64_t max_disk = 0;
  std::vector<std::string> requested =
      FilesRequestedWhileTheSecondHangs(40, uint64_t{1} << 20, 40, &names, &max_disk);
  EXPECT_EQ(requested, names);
}

// The same with two readers on the node (2 DataLoader workers): one file at
// a time by default, since one reader's extra files would hold room the
// other's budget counts on while its consumer is not called.
TEST(FilesInFlight, UnderACacheLimitTwoReadersOpenOneFileAtATime) {
  std::vector<std::string> names;
  uint64_t max_disk = 0;
  std::vector<std::string> requested =
      FilesRequestedWhileTheSecondHangs(40, uint64_t{1} << 20, 2, &names, &max_disk, 2);
  ASSERT_GT(names.size(), 2u);
  std::vector<std::string> expected(names.begin(), names.begin() + 2);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(requested, expected);
}

// A limit of about five files: several download beside the hung one, the
// folder never holds more than the limit, and the reader is not stuck
// waiting for room its own files hold (it waits for file 1 only: the
// error at Stop is that download's).
TEST(FilesInFlight, UnderATightCacheLimitSeveralDownloadAndTheLimitHolds) {
  std::vector<std::string> names;
  uint64_t max_disk = 0;
  const uint64_t limit = 5 * 1400;
  std::vector<std::string> requested =
      FilesRequestedWhileTheSecondHangs(40, limit, 4, &names, &max_disk);
  EXPECT_GE(requested.size(), 4u);
  EXPECT_LT(requested.size(), names.size());
  EXPECT_LE(max_disk, limit);
  EXPECT_GT(max_disk, 0u);
}

// Without a limit, a raw-file reader keeps 16 files opening at once, or its
// part of 64 per node when the node has more readers (8 workers: 8 each;
// 16 workers: 4 each): the first file alone, then the hung one and as many
// more as make that number.
TEST(FilesInFlight, FetchConcurrencyIsSharedByTheReadersOfTheNode) {
  for (auto [workers, each] : {std::pair<int64_t, size_t>{1, 16}, {8, 8}, {16, 4}}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    std::vector<std::string> names;
    uint64_t max_disk = 0;
    std::vector<std::string> requested =
        FilesRequestedWhileTheSecondHangs(400, std::nullopt, 1 + each, &names, &max_disk, workers);
    ASSERT_GT(names.size(), 1 + each);
    std::vector<std::string> expected(names.begin(), names.begin() + 1 + static_cast<long>(each));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(requested, expected);
  }
}

// The first sample's shard is fetched alone: while it hangs, nothing else
// is requested.
TEST(ShardsInFlight, TheFirstShardIsFetchedAlone) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 400, 4000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::string first = (*reader)->index().shards[0].raw_data.basename;
  StallingFileServer server(remote.path(), first);
  DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
  o.streams[0].remote = server.url();
  o.streams[0].download_retry = 0;
  // Shard requests are counted: a first-sample peek would be one more (as
  // this server ignores Range, one the peek drops after the response head:
  // see GetRangeOnly).
  o.peek_first_sample = false;
  o.predownload = 8;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  auto call = std::async(std::launch::async, [&] { return (*ds)->NextBatch(8, ids.data(), &fields); });
  EXPECT_EQ(ShardRequestsAfter(server, 1), std::vector<std::string>{"/" + first});
  server.Stop();
  EXPECT_FALSE(call.get().ok());
}

// The shards a reader opens at once (the metrics' fetch_concurrency, set
// as the pass begins) of a dataset over `remote`'s streams, each stream
// single pass or cached as `single_pass` says, in order or `shuffled`;
// `given` the key's value.
int64_t FetchConcurrencyOf(const std::string& remote, const std::vector<bool>& single_pass,
                           std::optional<int64_t> given = std::nullopt, bool shuffled = false) {
  std::vector<ScratchDir> locals(single_pass.size());
  DatasetOptions o = testing::OneStreamOptions(remote, locals[0].path());
  o.streams.clear();
  for (size_t s = 0; s < single_pass.size(); ++s) {
    StreamOptions stream = testing::OneStreamOptions(remote, locals[s].path()).streams[0];
    stream.single_pass = single_pass[s];
    o.streams.push_back(stream);
  }
  o.fetch_concurrency = given;
  o.plan.shuffle = shuffled;
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return -1;
  EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  return (*ds)->Metrics().fetch_concurrency;
}

// A single pass receives each shard it opens into a buffer of the shard's
// size: in order it opens two at once by default, a cached reader four; a
// shuffled single pass and a dataset with any cached stream keep four, and
// a value given applies as given.
TEST(ShardsInFlight, ASinglePassInOrderOpensTwoShardsAtOnceByDefault) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 400, 4000);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {true}), 2);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {true, true}), 2);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {false}), 4);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {true, false}), 4);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {true}, std::nullopt, /*shuffled=*/true), 4);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {true}, 4), 4);
  EXPECT_EQ(FetchConcurrencyOf(remote.path(), {false}, 1), 1);
}

}  // namespace
}  // namespace sluice

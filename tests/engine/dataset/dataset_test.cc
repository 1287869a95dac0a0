#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "bindings/cli/bench/cache_usage.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/planner/plan.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/mds_writer.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::ReadEpoch;
using testing::ScratchDir;
using testing::WriteSyntheticMds;

DatasetOptions LocalOptions(const std::string& local) {
  DatasetOptions o;
  StreamOptions s;
  s.local = local;
  o.streams.push_back(s);
  o.world.rank = 0;
  o.world.world_size = 1;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

DatasetOptions RemoteOptions(const std::string& remote, const std::string& local) {
  DatasetOptions o = LocalOptions(local);
  o.streams[0].remote = remote;
  return o;
}

std::vector<std::string> ReaderBytes(const std::string& dir, const std::vector<int64_t>& ids) {
  auto reader = DatasetReader::Open(dir);
  EXPECT_TRUE(reader.ok());
  std::vector<std::string> out;
  SampleFields f;
  for (int64_t id : ids) {
    EXPECT_TRUE((*reader)->Read(static_cast<uint64_t>(id), &f).ok());
    out.push_back(FieldBytes(f));
  }
  return out;
}

TEST(StreamingDataset, LocalOnlyIterationIsThePlanWithTheReadersBytes) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 500, 2000);
  DatasetOptions o = LocalOptions(dir.path());
  o.plan.shuffle = true;
  o.plan.batch_size = 4;
  o.plan.shuffle_block_size = 64;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ((*ds)->num_samples(), 500u);
  EXPECT_EQ((*ds)->epoch_size(), 500);
  EXPECT_EQ((*ds)->length(), 500);
  EXPECT_EQ((*ds)->column_names(), (std::vector<std::string>{"data", "id"}));
  std::multiset<int64_t> seen;
  for (int64_t worker = 0; worker < 2; ++worker) {
    planner::PlanRequest req;
    req.config = o.plan;
    auto reader = DatasetReader::Open(dir.path());
    ASSERT_TRUE(reader.ok());
    planner::StreamSpec spec;
    for (const auto& e : (*reader)->index().shards) spec.shard_sizes.push_back(e.samples);
    req.streams.push_back(spec);
    req.world.workers_per_rank = 2;
    req.epoch = 1;
    auto expected = planner::PlanWorker(req, 0, 0, worker);
    ASSERT_TRUE(expected.ok());
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = ReadEpoch(**ds, 1, 0, worker, 2, 7, &bytes);
    EXPECT_EQ(ids, *expected);
    EXPECT_EQ(bytes, ReaderBytes(dir.path(), ids));
    seen.insert(ids.begin(), ids.end());
  }
  ASSERT_EQ(seen.size(), 500u);
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  // Local-only data is never downloaded or evicted.
  DatasetCounters c = (*ds)->counters();
  EXPECT_EQ(c.shards_downloaded, 0u);
  EXPECT_EQ(c.shards_evicted, 0u);
  EXPECT_EQ(c.bytes_downloaded, 0u);
  EXPECT_GT(c.cache_hits, 0u);
}

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A local-only stream is read in place: iterating and random access write
// nothing into the dataset's folder (no cache state), so a folder that is
// only read (a read-only mount, a folder Mosaic also reads) stays as it was.
TEST(StreamingDataset, LocalOnlyStreamWritesNothingIntoItsFolder) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 1500, std::nullopt, {"sha1"});
  const std::vector<std::string> before = FilesIn(dir.path());
  DatasetOptions o = LocalOptions(dir.path());
  o.streams[0].validate_hash = "sha1";
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = ReadEpoch(**ds, 0, 0, 0, 1, 16, &bytes);
  ASSERT_EQ(ids.size(), 200u);
  EXPECT_EQ(bytes, ReaderBytes(dir.path(), ids));
  SampleFields f;
  ASSERT_TRUE((*ds)->Get(199, &f).ok());
  EXPECT_EQ(FieldBytes(f), ReaderBytes(dir.path(), {199})[0]);
  (*ds)->Release();
  EXPECT_EQ(FilesIn(dir.path()), before);
  DatasetCounters c = (*ds)->counters();
  EXPECT_EQ(c.shards_downloaded, 0u);
  EXPECT_GT(c.cache_hits, 0u);
}

// A local-only shard stored only compressed is decompressed into the folder
// once (as Mosaic does), through the node's cache state; the shards present
// raw are still read in place.
TEST(StreamingDataset, LocalOnlyStreamDecompressesAMissingRawShardIntoItsFolder) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 1500, "zstd");
  auto reader = DatasetReader::Open(dir.path());
  ASSERT_TRUE(reader.ok());
  const ShardEntry& e = (*reader)->index().shards[1];
  ASSERT_TRUE(e.zip_data.has_value());
  const std::string raw = JoinPath(dir.path(), e.raw_data.basename);
  const std::string expected = ReaderBytes(dir.path(), {static_cast<int64_t>(
      (*reader)->index().shards[0].samples)})[0];
  fs::remove(raw);  // a compressing writer may have kept it
  ASSERT_FALSE(fs::exists(raw));
  auto ds = StreamingDataset::Open(LocalOptions(dir.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  SampleFields f;
  ASSERT_TRUE((*ds)->Get((*reader)->index().shards[0].samples, &f).ok());
  EXPECT_EQ(FieldBytes(f), expected);
  EXPECT_TRUE(fs::exists(raw));
  EXPECT_EQ(fs::file_size(raw), e.raw_data.bytes);
}

TEST(StreamingDataset, RandomAccessMatchesTheReader) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 300, 1500, "zstd", {"sha1"});
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  o.streams[0].validate_hash = "sha1";
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int64_t> ids = {299, 0, 1, 150, 150, 17, 298};
  std::vector<std::string> expected = ReaderBytes(dir.path(), ids);
  SampleFields f;
  for (size_t k = 0; k < ids.size(); ++k) {
    ASSERT_TRUE((*ds)->Get(static_cast<uint64_t>(ids[k]), &f).ok());
    EXPECT_EQ(FieldBytes(f), expected[k]) << ids[k];
  }
  Status past = (*ds)->Get(300, &f);
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(past.message(), "sample 300 is past the end (the dataset has 300 samples)");
  DatasetCounters c = (*ds)->counters();
  EXPECT_GT(c.shards_downloaded, 0u);
  EXPECT_GT(c.bytes_downloaded, 0u);
  // Decompressed into the cache; the zips are not kept (keep_zip false).
  for (const auto& e : fs::directory_iterator(cache.path())) {
    EXPECT_EQ(e.path().extension().string().find(".zstd"), std::string::npos) << e.path();
  }
}

TEST(StreamingDataset, KeepZipKeepsTheCompressedFile) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 50, 100000, "zstd");
  ScratchDir cache;
  DatasetOptions o = RemoteOptions("file://" + dir.path(), cache.path());
  o.streams[0].keep_zip = true;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  SampleFields f;
  ASSERT_TRUE((*ds)->Get(0, &f).ok());
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), "shard.00000.mds")));
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), "shard.00000.mds.zstd")));
}

TEST(StreamingDataset, EvictsUnderTheCacheLimitAndFetchesEachShardOnce) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 600, 2000);
  uint64_t dataset_bytes = testing::ShardBytesOnDisk(dir.path());
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  o.cache_limit = 9000;  // a few shards of ~2 KB
  o.prefetch_next_epoch = false;  // count this epoch's fetches only
  o.plan.batch_size = 8;
  o.predownload = 16;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = ReadEpoch(**ds, 0, 0, 0, 1, 8, &bytes);
  ASSERT_EQ(ids.size(), 600u);
  for (int64_t i = 0; i < 600; ++i) ASSERT_EQ(ids[i], i);
  EXPECT_EQ(bytes, ReaderBytes(dir.path(), ids));
  auto reader = DatasetReader::Open(dir.path());
  size_t shards = (*reader)->num_shards();
  DatasetCounters c = (*ds)->counters();
  EXPECT_EQ(c.shards_downloaded, shards);  // sequential: never twice
  EXPECT_GE(c.shards_evicted, shards - 5);
  EXPECT_EQ(c.bytes_downloaded, dataset_bytes);
  EXPECT_LE(testing::ShardBytesOnDisk(cache.path()), 9000u);
}

TEST(StreamingDataset, LimitSmallerThanAShardIsAnErrorAtStart) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 100, 2000);
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  o.cache_limit = 100;
  auto ds = StreamingDataset::Open(o);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("cache_limit 100 bytes"), std::string::npos)
      << ds.status().message();
}

TEST(StreamingDataset, ResumptionYieldsTheTail) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 400, 3000);
  DatasetOptions o = LocalOptions(dir.path());
  o.plan.shuffle = true;
  o.plan.batch_size = 5;
  o.plan.shuffle_seed = 123;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok());
  std::vector<std::string> full_bytes;
  std::vector<int64_t> full = ReadEpoch(**ds, 2, 0, 0, 1, 5, &full_bytes);
  ASSERT_EQ(full.size(), 400u);
  for (size_t stop : {0u, 1u, 5u, 137u, 399u, 400u}) {
    // Consume `stop` samples, save the state, resume in a fresh dataset.
    ASSERT_TRUE((*ds)->IterBegin(2, 0, 0, 1).ok());
    std::vector<int64_t> ids(400);
    std::vector<SampleFields> fields;
    size_t got = 0;
    while (got < stop) {
      auto n = (*ds)->NextBatch(std::min<size_t>(7, stop - got), ids.data(), &fields);
      ASSERT_TRUE(n.ok());
      got += *n;
    }
    std::string json = ResumeStateToJson((*ds)->State(stop));
    auto state = ResumeStateFromJson(json);
    ASSERT_TRUE(state.ok());
    EXPECT_EQ(state->epoch, 2);
    EXPECT_EQ(state->sample_in_epoch, static_cast<int64_t>(stop));
    EXPECT_EQ(state->shuffle_seed, 123u);
    DatasetOptions fresh = o;
    fresh.plan.shuffle_seed = 1;  // the state's seed wins
    auto resumed = StreamingDataset::Open(fresh);
    ASSERT_TRUE(resumed.ok());
    ASSERT_TRUE((*resumed)->LoadState(*state).ok());
    std::vector<std::string> tail_bytes;
    std::vector<int64_t> tail =
        ReadEpoch(**resumed, state->epoch, state->sample_in_epoch, 0, 1, 3, &tail_bytes);
    EXPECT_EQ(tail, std::vector<int64_t>(full.begin() + stop, full.end())) << stop;
    EXPECT_EQ(tail_bytes, std::vector<std::string>(full_bytes.begin() + stop, full_bytes.end()));
  }
}

TEST(StreamingDataset, CorruptCachedShardIsDetectedDeletedAndFetchedAgain) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 200, 2000, std::nullopt, {"sha1", "xxh64"});
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  o.streams[0].validate_hash = "xxh64";
  o.prefetch_next_epoch = false;
  std::vector<std::string> expected;
  {
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ReadEpoch(**ds, 0, 0, 0, 1, 16, &expected);
  }
  // Flip one byte of a cached shard, keeping its size.
  std::string victim = JoinPath(cache.path(), "shard.00002.mds");
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekg(40);
    char c = 0;
    f.read(&c, 1);
    f.seekp(40);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok());
  std::vector<std::string> again;
  ReadEpoch(**ds, 0, 0, 0, 1, 16, &again);
  EXPECT_EQ(again, expected);
  DatasetCounters c = (*ds)->counters();
  EXPECT_EQ(c.shards_downloaded, 1u);  // only the corrupt one
  EXPECT_EQ(testing::ShardBytesOnDisk(cache.path()), testing::ShardBytesOnDisk(dir.path()));

  // Without a remote the same corruption is a clear error, and the file stays.
  DatasetOptions local = LocalOptions(dir.path());
  local.streams[0].validate_hash = "xxh64";
  std::string remote_victim = JoinPath(dir.path(), "shard.00002.mds");
  fs::copy_file(victim, remote_victim + ".good");
  {
    std::fstream f(remote_victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(41);
    f.write("\x01", 1);
  }
  auto lds = StreamingDataset::Open(local);
  ASSERT_TRUE(lds.ok());
  auto reader = DatasetReader::Open(dir.path());
  uint64_t first = (*reader)->shard_start(2);
  SampleFields f;
  Status s = (*lds)->Get(first, &f);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kHashMismatch) << s.message();
  EXPECT_NE(s.message().find("shard.00002.mds"), std::string::npos) << s.message();
  EXPECT_TRUE(FileExists(remote_victim));
}

TEST(StreamingDataset, MissingRemoteShardIsAClearError) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 100, 2000);
  ASSERT_TRUE(fs::remove(JoinPath(dir.path(), "shard.00001.mds")));
  ScratchDir cache;
  auto ds = StreamingDataset::Open(RemoteOptions(dir.path(), cache.path()));
  ASSERT_TRUE(ds.ok());
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(100);
  std::vector<SampleFields> fields;
  // A call may end early at a shard not open yet; the error comes at shard 1.
  auto n = (*ds)->NextBatch(100, ids.data(), &fields);
  while (n.ok() && *n > 0) n = (*ds)->NextBatch(100, ids.data(), &fields);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound) << n.status().message();
  EXPECT_NE(n.status().message().find("shard.00001.mds"), std::string::npos) << n.status().message();
  EXPECT_FALSE(FileExists(JoinPath(cache.path(), "shard.00001.mds")));
}

// A column whose encoding is a user's own: refused at open unless the
// caller registered it (by name, or any with custom_encodings.any), then
// its fields are handed out as stored.
TEST(StreamingDataset, UnregisteredEncodingFailsAtOpen) {
  ScratchDir dir;
  auto w = MdsWriter::Create(dir.path(), {{"z", "complex128"}, {"id", "int"}},
                             ShardedWriterOptions{}, {{"complex128", std::nullopt}});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::string id(8, '\x07');
  ASSERT_TRUE((*w)->WriteFields({id, "abc"}).ok());  // columns sorted: id, z
  ASSERT_TRUE((*w)->Finish().ok());

  auto refused = StreamingDataset::Open(LocalOptions(dir.path()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().ToString(),
            "unimplemented: stream 0 (" + dir.path() +
                "): shard 0 (shard.00000.mds): column 'z' has encoding 'complex128', which is "
                "neither built in nor registered");
  for (bool any : {false, true}) {
    DatasetOptions o = LocalOptions(dir.path());
    if (any) {
      o.custom_encodings.any = true;
    } else {
      o.custom_encodings.names = {"complex128"};
    }
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_EQ((*ds)->column_encodings(), (std::vector<std::string>{"int", "complex128"}));
    SampleFields f;
    ASSERT_TRUE((*ds)->Get(0, &f).ok());
    EXPECT_EQ(f.fields, (std::vector<std::string_view>{id, "abc"}));
  }
}

TEST(StreamingDataset, SplitAndUnsafeIndexNames) {
  ScratchDir dir;
  WriteSyntheticMds(JoinPath(dir.path(), "train"), 30, 100000);
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  o.streams[0].split = "train";
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  SampleFields f;
  ASSERT_TRUE((*ds)->Get(29, &f).ok());
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), "train/index.json")));
  EXPECT_TRUE(FileExists(JoinPath(cache.path(), "train/shard.00000.mds")));

  // An index naming a file outside the folder is refused.
  ScratchDir evil;
  auto text = ReadFile(JoinPath(dir.path(), "train/index.json"));
  ASSERT_TRUE(text.ok());
  std::string bad = *text;
  size_t at = bad.find("shard.00000.mds");
  bad.replace(at, 15, "../x/evil.mds00");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(evil.path(), "index.json"), bad).ok());
  auto refused = StreamingDataset::Open(LocalOptions(evil.path()));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("../x/evil.mds00"), std::string::npos)
      << refused.status().message();
}

TEST(StreamingDataset, NextEpochsFirstShardsArePrefetchedBeforeItStarts) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 400, 2000);
  // Find a seed whose epoch 1 starts in a shard worker 0 did not read in epoch 0.
  for (uint64_t seed = 1; seed < 50; ++seed) {
    ScratchDir cache;
    DatasetOptions o = RemoteOptions(dir.path(), cache.path());
    o.plan.shuffle = true;
    o.plan.shuffle_seed = seed;
    o.plan.batch_size = 4;
    o.predownload = 8;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok());
    auto e0 = (*ds)->WorkerIds(0, 0, 0, 4);
    auto e1 = (*ds)->WorkerIds(1, 0, 0, 4);
    ASSERT_TRUE(e0.ok() && e1.ok());
    SampleFields f;
    auto reader = DatasetReader::Open(dir.path());
    std::set<size_t> read0;
    for (int64_t id : *e0) read0.insert((*(*reader)->Locate(id)).shard);
    size_t first1 = (*(*reader)->Locate((*e1)[0])).shard;
    if (read0.count(first1)) continue;
    std::string first1_path = JoinPath(cache.path(), (*reader)->index().shards[first1].raw_data.basename);
    std::vector<int64_t> ids = ReadEpoch(**ds, 0, 0, 0, 4, 4, nullptr);
    EXPECT_EQ(ids, *e0);
    // Without the consumer asking, epoch 1's first shard arrives.
    bool arrived = false;
    for (int i = 0; i < 5000 && !arrived; ++i) {
      arrived = FileExists(first1_path);
      if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(arrived) << first1_path;
    uint64_t fetched = (*ds)->counters().shards_downloaded;
    std::vector<std::string> bytes;
    std::vector<int64_t> next = ReadEpoch(**ds, 1, 0, 0, 4, 4, &bytes);
    EXPECT_EQ(next, *e1);
    EXPECT_EQ(bytes, ReaderBytes(dir.path(), next));
    EXPECT_GT((*ds)->counters().shards_downloaded, fetched);  // the rest of epoch 1
    return;
  }
  FAIL() << "no seed found whose epoch 1 starts in a new shard";
}

TEST(StreamingDataset, VanishedCachedShardIsFetchedAgain) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 100, 2000);
  ScratchDir cache;
  DatasetOptions o = RemoteOptions(dir.path(), cache.path());
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok());
  SampleFields f;
  ASSERT_TRUE((*ds)->Get(0, &f).ok());
  std::string expected = FieldBytes(f);
  (*ds)->Release();
  ASSERT_TRUE(fs::remove(JoinPath(cache.path(), "shard.00000.mds")));
  ASSERT_TRUE((*ds)->Get(0, &f).ok());
  EXPECT_EQ(FieldBytes(f), expected);
  EXPECT_EQ((*ds)->counters().shards_downloaded, 2u);
}

// What the cache-limit tests count: shard files, each inode once, without
// the state folder, index.json or the index's download temporary (which once
// made a multi-process test see 11,234 bytes against a 4,000-byte limit).
TEST(DatasetTestUtil, ShardBytesOnDiskCountsShardsOnly) {
  ScratchDir dir;
  const std::string d = dir.path();
  ASSERT_TRUE(MakeDirs(d + "/.sluice").ok());
  ASSERT_TRUE(MakeDirs(d + "/sub").ok());
  ASSERT_TRUE(WriteFileAtomic(d + "/.sluice/state", std::string(100, 's')).ok());
  ASSERT_TRUE(WriteFileAtomic(d + "/index.json", std::string(200, 'i')).ok());
  ASSERT_TRUE(WriteFileAtomic(TempPathFor(d + "/index.json"), std::string(300, 't')).ok());
  ASSERT_TRUE(WriteFileAtomic(d + "/shard.00000.mds", std::string(40, 'a')).ok());
  ASSERT_TRUE(WriteFileAtomic(d + "/sub/shard.00001.mds", std::string(2, 'b')).ok());
  ASSERT_EQ(::link((d + "/shard.00000.mds").c_str(), (d + "/sub/hardlink").c_str()), 0);
  EXPECT_EQ(testing::ShardBytesOnDisk(d), 42u);
}

// The DiskSampler's bound over several folders of a node: with nothing
// changing, every counted file is seen by both walks and counts once.
TEST(DatasetTestUtil, CachedBytesAtOneInstantSumsTheFoldersOfANode) {
  ScratchDir a, b;
  ASSERT_TRUE(WriteFileAtomic(a.path() + "/shard.00000.mds", std::string(40, 'a')).ok());
  ASSERT_TRUE(WriteFileAtomic(a.path() + "/index.json", std::string(200, 'i')).ok());
  ASSERT_TRUE(MakeDirs(b.path() + "/x").ok());
  ASSERT_TRUE(WriteFileAtomic(b.path() + "/x/file.jpg", std::string(7, 'b')).ok());
  EXPECT_EQ(bench::CachedBytesAtOneInstant({a.path(), b.path()}), 47u);
  EXPECT_EQ(bench::CachedBytesAtOneInstant({a.path() + "/missing"}), 0u);
}

// The warning Mosaic's py1e gives while planning an epoch comes with the
// iteration IterBegin starts (planner::PlanWorker's, nothing planned
// again), whether IterBegin planned it or the previous epoch's prefetch
// thread did (the hand-off; given time after each epoch, that thread has
// planned the next one). Six shards of 100 samples, block 120, seed 7:
// Mosaic warns in epochs 1, 4 and 5 (tests/engine/planner/shuffle_test.cc).
TEST(StreamingDataset, AnIterationsPlanCarriesItsShuffleWarning) {
  ScratchDir dir;
  {
    ShardedWriterOptions options;
    options.size_limit = 1370;  // 100 samples of one int per shard, as Mosaic cuts them
    auto writer = MdsWriter::Create(dir.path(), {{"id", "int"}}, options);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (int64_t i = 0; i < 600; ++i) {
      std::string le(8, '\0');
      for (int b = 0; b < 8; ++b) le[size_t(b)] = static_cast<char>((i >> (8 * b)) & 0xff);
      ASSERT_TRUE((*writer)->WriteFields({le}).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  const std::string text = "Shuffle block size was smaller than shard size for some shards. This" +
                           std::string(25, ' ') +
                           "will result in these shards not being shuffled with other shards. Set" +
                           std::string(25, ' ') +
                           "shuffle_block_size to a larger value for a higher quality shuffle.";
  for (bool prefetch : {false, true}) {
    SCOPED_TRACE(prefetch ? "next epoch planned ahead" : "each epoch planned by IterBegin");
    DatasetOptions o = LocalOptions(dir.path());
    o.plan.shuffle = true;
    o.plan.shuffle_algo = planner::ShuffleAlgo::kPy1e;
    o.plan.shuffle_seed = 7;
    o.plan.shuffle_block_size = 120;
    o.plan.num_canonical_nodes = 2;
    o.plan.batch_size = 4;
    o.prefetch_next_epoch = prefetch;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    ASSERT_EQ((*ds)->num_shards(), 6u);
    ASSERT_EQ((*ds)->num_samples(), 600u);
    EXPECT_EQ((*ds)->shuffle_warning(), std::nullopt);  // no iteration yet
    std::vector<std::optional<std::string>> warned;
    for (int64_t epoch = 0; epoch < 6; ++epoch) {
      EXPECT_EQ(ReadEpoch(**ds, epoch, 0, 0, 1, 64, nullptr).size(), 600u);
      warned.push_back((*ds)->shuffle_warning());
      if (prefetch) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::optional<std::string> none;
    EXPECT_EQ(warned, (std::vector<std::optional<std::string>>{none, text, none, none, text, text}));
  }
}

// One view plans every worker of its world (sluice bench --plan-only):
// PeerWorkerIds of a node's workers, or of one, is what each rank's own
// view gives from WorkerIds, with the epoch's checkpoints and without; the
// shuffles with no checkpoints say so with nullopt. 3 nodes x 2 ranks x 2
// workers, 6 shards.
TEST(StreamingDataset, PeerWorkerIdsAreEachRanksOwnPlan) {
  ScratchDir dir;
  WriteSyntheticMds(dir.path(), 600, 9000);
  auto world = [&](planner::ShuffleAlgo algo, int64_t node, int64_t rank) {
    DatasetOptions o = LocalOptions(dir.path());
    o.plan.shuffle = true;
    o.plan.shuffle_algo = algo;
    o.plan.shuffle_seed = 11;
    o.plan.shuffle_block_size = 150;
    o.plan.num_canonical_nodes = 6;
    o.plan.batch_size = 4;
    o.world.world_size = 6, o.world.local_world_size = 2;
    o.world.rank = node * 2 + rank, o.world.local_rank = rank;
    return o;
  };
  for (auto algo : {planner::ShuffleAlgo::kPy1e, planner::ShuffleAlgo::kPy1s, planner::ShuffleAlgo::kPy1br}) {
    SCOPED_TRACE(static_cast<int>(algo));
    auto first = StreamingDataset::Open(world(algo, 0, 0));
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_GT((*first)->num_shards(), 3u);
    for (int64_t epoch : {0, 1}) {
      auto cp = (*first)->EpochCheckpoints(epoch);
      ASSERT_TRUE(cp.ok()) << cp.status().message();
      EXPECT_EQ(cp->has_value(), algo != planner::ShuffleAlgo::kPy1br);
      std::vector<int64_t> every;
      for (int64_t node = 0; node < 3; ++node) {
        // The node's workers in a scrambled order, planned together.
        const std::vector<planner::WorkerAt> workers = {{node, 1, 0}, {node, 0, 1}, {node, 0, 0}, {node, 1, 1}};
        auto together = (*first)->PeerWorkerIds(workers, epoch, 2, cp->has_value() ? &**cp : nullptr);
        ASSERT_TRUE(together.ok()) << together.status().message();
        ASSERT_EQ(together->size(), 4u);
        for (size_t k = 0; k < workers.size(); ++k) {
          const planner::WorkerAt& at = workers[k];
          auto own = StreamingDataset::Open(world(algo, node, at.rank));
          ASSERT_TRUE(own.ok()) << own.status().message();
          auto want = (*own)->WorkerIds(epoch, 0, at.worker, 2);
          auto alone = (*first)->PeerWorkerIds(std::span(&at, 1), epoch, 2, nullptr);
          ASSERT_TRUE(want.ok() && alone.ok());
          EXPECT_FALSE(want->empty());
          EXPECT_EQ((*alone)[0], *want) << node << " " << at.rank << " " << at.worker;
          EXPECT_EQ((*together)[k], *want) << node << " " << at.rank << " " << at.worker;
          every.insert(every.end(), want->begin(), want->end());
        }
      }
      std::sort(every.begin(), every.end());
      EXPECT_EQ(every.size(), 600u);  // each sample once over the world
      EXPECT_EQ(std::unique(every.begin(), every.end()), every.end());
    }
  }
  auto view = StreamingDataset::Open(world(planner::ShuffleAlgo::kPy1e, 1, 1));
  ASSERT_TRUE(view.ok());
  auto ids = [&](planner::WorkerAt at, int64_t epoch, const planner::EpochCheckpoints* cp) {
    return (*view)->PeerWorkerIds(std::span(&at, 1), epoch, 2, cp).status().message();
  };
  EXPECT_EQ(ids({3, 0, 0}, 0, nullptr), "worker (node 3, rank 0, worker 0) is outside the world of 3 x 2 x 2");
  EXPECT_EQ(ids({0, 2, 0}, 0, nullptr), "worker (node 0, rank 2, worker 0) is outside the world of 3 x 2 x 2");
  EXPECT_EQ(ids({0, 0, 2}, 0, nullptr), "worker (node 0, rank 0, worker 2) is outside the world of 3 x 2 x 2");
  EXPECT_EQ(ids({0, 0, 0}, -1, nullptr), "epoch must not be negative");
  // Another epoch's checkpoints are refused by the planner, never used.
  auto cp1 = (*view)->EpochCheckpoints(1);
  ASSERT_TRUE(cp1.ok() && cp1->has_value());
  EXPECT_EQ(ids({0, 0, 0}, 0, &**cp1),
            "the epoch checkpoints were made for another plan (seed, epoch, samples, canonical nodes or block size "
            "differ)");
}

}  // namespace
}  // namespace sluice

// cache_limit: the least room one reader needs is checked at start, and the
// bytes on disk in the cache folders stay under the limit while reading.
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

// OneStreamOptions with a shorter wait: these tests expect waits to end.
DatasetOptions CachedOptions(const std::string& remote, const std::string& local) {
  DatasetOptions o = testing::OneStreamOptions(remote, local);
  o.wait_timeout = std::chrono::seconds(5);
  return o;
}

const Index& IndexOf(const std::unique_ptr<DatasetReader>& r) { return r->index(); }

TEST(CacheLimit, BelowOneReadersWorkingSetIsAnErrorAtStartWithTheNumbers) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 300, 2000, std::string("zstd"));
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  // A compressed shard is fetched as its download plus the decompressed
  // file: both are on disk at once.
  uint64_t largest_raw = 0, need = 0;
  size_t shard = 0;
  for (size_t i = 0; i < IndexOf(*reader).shards.size(); ++i) {
    const ShardEntry& e = IndexOf(*reader).shards[i];
    ASSERT_TRUE(e.zip_data.has_value());
    largest_raw = std::max(largest_raw, e.raw_data.bytes);
    if (e.raw_data.bytes + e.zip_data->bytes > need) {
      need = e.raw_data.bytes + e.zip_data->bytes;
      shard = i;
    }
  }
  ASSERT_LT(largest_raw, need);
  for (uint64_t limit : {uint64_t{100}, largest_raw, need - 1}) {
    DatasetOptions o = CachedOptions(remote.path(), cache.path());
    o.cache_limit = limit;
    auto ds = StreamingDataset::Open(o);
    ASSERT_FALSE(ds.ok()) << limit;
    EXPECT_EQ(ds.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = ds.status().message();
    EXPECT_NE(m.find("cache_limit " + std::to_string(limit) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(need) + " bytes for shard " + std::to_string(shard) + ": data '" +
                     IndexOf(*reader).shards[shard].raw_data.basename + "'"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("compressed '" + IndexOf(*reader).shards[shard].zip_data->basename + "'"),
              std::string::npos)
        << m;
  }
  // keep_zip keeps the compressed file: the same shard needs the same room.
  DatasetOptions o = CachedOptions(remote.path(), cache.path());
  o.cache_limit = need;
  EXPECT_TRUE(StreamingDataset::Open(o).ok());
  o.streams[0].keep_zip = true;
  EXPECT_TRUE(StreamingDataset::Open(o).ok());
}

// Mosaic's own two checks, asked for by the Python package: above the
// index.json files, and four times the largest shard (raw + compressed);
// without them a limit of one shard's working set opens.
TEST(CacheLimit, MosaicsChecksWhenAskedWithItsTexts) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 300, 2000, std::string("zstd"));
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t largest = 0;
  for (const ShardEntry& e : IndexOf(*reader).shards) {
    largest = std::max(largest, e.raw_data.bytes + e.zip_data->bytes);
  }
  auto index_size = FileSize(remote.path() + "/index.json");
  ASSERT_TRUE(index_size.ok());
  auto open = [&](uint64_t limit, bool mosaic) {
    DatasetOptions o = CachedOptions(remote.path(), cache.path());
    o.cache_limit = limit;
    o.mosaic_cache_limit_checks = mosaic;
    return StreamingDataset::Open(o);
  };
  auto small = open(*index_size, true);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().message(),
            "ValueError: Minimum cache usage (" + std::to_string(*index_size) +
                " bytes) is larger than the cache limit (" + std::to_string(*index_size) +
                " bytes). Please raise `cache_limit`. Recommendation is to provide a "
                "`cache_limit` as high as possible to avoid thrashing.");
  auto low = open(4 * largest - 1, true);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.status().message(),
            "ValueError: Cache limit (" + std::to_string(4 * largest - 1) +
                " bytes) is too low. Increase the `cache_limit` to at-least four times the "
                "largest shard size (" + std::to_string(largest) +
                " bytes) which includes raw (decompressed) and zip (compressed) file size. "
                "Recommendation is to provide a `cache_limit` as high as possible to avoid "
                "thrashing.");
  EXPECT_TRUE(open(4 * largest, true).ok());
  auto engine_only = open(largest, false);
  EXPECT_TRUE(engine_only.ok()) << engine_only.status().message();
}

TEST(CacheLimit, OneReadersWorkingSetIsEnoughForShuffledBatchesSpanningShards) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 400, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t largest = 0;
  for (const ShardEntry& e : IndexOf(*reader).shards) largest = std::max(largest, e.raw_data.bytes);
  DatasetOptions o = CachedOptions(remote.path(), cache.path());
  o.cache_limit = largest;  // exactly one shard at a time
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 3;
  o.plan.shuffle_block_size = 100;  // consecutive samples hop between shards
  o.predownload = 64;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  auto plan = (*ds)->WorkerIds(0, 0, 0, 1);
  ASSERT_TRUE(plan.ok());
  testing::DiskSampler sampler({{cache.path()}});
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> all, ids(64);
  std::vector<SampleFields> fields;
  size_t calls = 0;
  for (;;) {
    auto n = (*ds)->NextBatch(64, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().message();
    if (*n == 0) break;
    ++calls;
    // One call never holds more than one shard under this limit.
    for (size_t k = 1; k < *n; ++k) ASSERT_EQ(fields[k].where.shard, fields[0].where.shard);
    all.insert(all.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(*n));
  }
  sampler.Stop();
  EXPECT_EQ(all, *plan);
  EXPECT_GT(calls, 400u / 64u + 1) << "short batches where the shard changes";
  EXPECT_GT(sampler.samples(), 0u);
  EXPECT_LE(sampler.max(), largest);
}

// A limit with room for the whole stream caches every shard once: fetching
// the last compressed shard needs its download beside all the others, and
// that room is part of the stream's share (it once stopped at the kept
// bytes, so one shard was evicted and fetched again every epoch).
TEST(CacheLimit, RoomForTheWholeStreamFetchesEachShardOnce) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 600, 2000, std::string("zstd"));
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  const size_t shards = IndexOf(*reader).shards.size();
  for (bool keep_zip : {false, true}) {
    SCOPED_TRACE(keep_zip ? "keep_zip" : "no keep_zip");
    uint64_t kept = 0, beyond = 0;
    for (const ShardEntry& e : IndexOf(*reader).shards) {
      kept += e.raw_data.bytes + (keep_zip ? e.zip_data->bytes : 0);
      if (!keep_zip) beyond = std::max(beyond, e.zip_data->bytes);
    }
    ScratchDir cache;
    DatasetOptions o = CachedOptions(remote.path(), cache.path());
    o.streams[0].keep_zip = keep_zip;
    o.cache_limit = kept + beyond;  // exactly enough
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      std::vector<std::string> bytes;
      EXPECT_EQ(testing::ReadEpoch(**ds, epoch, 0, 0, 1, 16, &bytes).size(), 600u);
    }
    EXPECT_EQ((*ds)->counters().shards_downloaded, shards);
    EXPECT_EQ((*ds)->counters().shards_evicted, 0u);
    size_t raws = 0;
    for (const ShardEntry& e : IndexOf(*reader).shards) {
      raws += FileExists(JoinPath(cache.path(), e.raw_data.basename));
    }
    EXPECT_EQ(raws, shards);
  }
}

// Compressed shards: the download beside the shard being fetched, and with
// keep_zip the kept compressed files, count under cache_limit, so the bytes
// on disk (temp and scratch files included) never pass it.
TEST(CacheLimit, CompressedDownloadsAndKeptZipsStayUnderTheLimitOnDisk) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 600, 2000, std::string("zstd"));
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t total_raw = 0, total_zip = 0, need = 0;
  for (const ShardEntry& e : IndexOf(*reader).shards) {
    total_raw += e.raw_data.bytes;
    total_zip += e.zip_data->bytes;
    need = std::max(need, e.raw_data.bytes + e.zip_data->bytes);
  }
  for (bool keep_zip : {false, true}) {
    SCOPED_TRACE(keep_zip ? "keep_zip" : "no keep_zip");
    ScratchDir cache;
    DatasetOptions o = CachedOptions(remote.path(), cache.path());
    o.streams[0].keep_zip = keep_zip;
    o.cache_limit = need * 5 / 2;  // room for two shards, not three
    ASSERT_LT(*o.cache_limit, (total_raw + total_zip) / 4);
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 11;
    o.plan.shuffle_block_size = 200;
    o.predownload = 32;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    auto plan = (*ds)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(plan.ok());
    testing::DiskSampler sampler({{cache.path()}});
    std::vector<std::string> bytes;
    std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 16, &bytes);
    sampler.Stop();
    ASSERT_EQ(ids, *plan);
    SampleFields f;
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*reader)->Read(static_cast<uint64_t>(ids[i]), &f).ok());
      ASSERT_EQ(bytes[i], testing::FieldBytes(f)) << ids[i];
    }
    EXPECT_GT((*ds)->counters().shards_evicted, 0u);
    EXPECT_GT(sampler.samples(), 0u);
    EXPECT_GT(sampler.max(), 0u);
    EXPECT_LE(sampler.max(), *o.cache_limit);
    // What is left: whole shards, with their zips exactly when kept.
    size_t raws = 0, zips = 0;
    for (const ShardEntry& e : IndexOf(*reader).shards) {
      raws += FileExists(JoinPath(cache.path(), e.raw_data.basename));
      zips += FileExists(JoinPath(cache.path(), e.zip_data->basename));
    }
    EXPECT_GT(raws, 0u);
    EXPECT_EQ(zips, keep_zip ? raws : 0u);
  }
}

// Streams with different local folders: cache_limit is one limit over all
// of them (as Mosaic's), so the folders together stay under it.
TEST(CacheLimit, OneLimitOverTheFoldersOfAllStreams) {
  ScratchDir remote_a, remote_b, scratch;
  testing::WriteSyntheticMds(remote_a.path(), 300, 2000);
  testing::WriteSyntheticMds(remote_b.path(), 200, 1200);
  auto reader_a = DatasetReader::Open(remote_a.path());
  auto reader_b = DatasetReader::Open(remote_b.path());
  ASSERT_TRUE(reader_a.ok() && reader_b.ok());
  auto largest = [](const Index& index) {
    uint64_t m = 0;
    for (const ShardEntry& e : index.shards) m = std::max(m, e.raw_data.bytes);
    return m;
  };
  const uint64_t min_a = largest(IndexOf(*reader_a)), min_b = largest(IndexOf(*reader_b));
  const uint64_t total = testing::ShardBytesOnDisk(remote_a.path()) +
                         testing::ShardBytesOnDisk(remote_b.path());
  const std::string local_a = JoinPath(scratch.path(), "a"), local_b = JoinPath(scratch.path(), "b");
  auto options = [&](uint64_t limit) {
    DatasetOptions o = CachedOptions(remote_a.path(), local_a);
    StreamOptions b;
    b.remote = remote_b.path();
    b.local = local_b;
    o.streams.push_back(b);
    o.cache_limit = limit;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 17;
    o.predownload = 16;
    return o;
  };
  // Each stream's working set fits alone, not both together.
  auto too_small = StreamingDataset::Open(options(min_a + min_b - 1));
  ASSERT_FALSE(too_small.ok());
  const std::string& m = too_small.status().message();
  EXPECT_NE(m.find("cache_limit " + std::to_string(min_a + min_b - 1) +
                   " bytes (one limit over all streams' caches)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(std::to_string(min_a + min_b) + " bytes needed (stream 0 (" + local_a + ") " +
                   std::to_string(min_a) + " bytes; stream 1 (" + local_b + ") " +
                   std::to_string(min_b) + " bytes)"),
            std::string::npos)
      << m;

  const uint64_t limit = total / 3;
  ASSERT_GT(limit, 3 * (min_a + min_b));
  auto ds = StreamingDataset::Open(options(limit));
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  auto plan = (*ds)->WorkerIds(0, 0, 0, 1);
  ASSERT_TRUE(plan.ok());
  testing::DiskSampler sampler({{local_a, local_b}});
  std::vector<std::string> bytes;
  std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 16, &bytes);
  sampler.Stop();
  ASSERT_EQ(ids, *plan);
  ASSERT_EQ(ids.size(), 500u);
  SampleFields f;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 300) {
      ASSERT_TRUE((*reader_a)->Read(static_cast<uint64_t>(ids[i]), &f).ok());
    } else {
      ASSERT_TRUE((*reader_b)->Read(static_cast<uint64_t>(ids[i] - 300), &f).ok());
    }
    ASSERT_EQ(bytes[i], testing::FieldBytes(f)) << ids[i];
  }
  EXPECT_GT((*ds)->counters().shards_evicted, 0u);
  EXPECT_GT(testing::ShardBytesOnDisk(local_a), 0u);
  EXPECT_GT(testing::ShardBytesOnDisk(local_b), 0u);
  EXPECT_GT(sampler.samples(), 0u);
  EXPECT_LE(sampler.max(), limit);
}

// Under a limit of one shard, the next epoch's prefetch (which finds no
// room while this epoch's shards are pinned) must not hold up the next
// IterBegin until wait_timeout: starting the next epoch cancels it.
TEST(CacheLimit, NextEpochPrefetchUnderATightLimitDoesNotDelayTheNextEpoch) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 200, 2000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok());
  uint64_t largest = 0;
  for (const ShardEntry& e : IndexOf(*reader).shards) largest = std::max(largest, e.raw_data.bytes);
  DatasetOptions o = CachedOptions(remote.path(), cache.path());
  o.cache_limit = largest;
  o.prefetch_next_epoch = true;
  o.predownload = 64;
  o.plan.shuffle = true;
  o.wait_timeout = std::chrono::seconds(30);
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    auto plan = (*ds)->WorkerIds(epoch, 0, 0, 1);
    ASSERT_TRUE(plan.ok());
    auto start = std::chrono::steady_clock::now();
    std::vector<int64_t> ids = testing::ReadEpoch(**ds, epoch, 0, 0, 1, 16, nullptr);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(ids, *plan);
    // Far below wait_timeout: nothing waited for it to expire.
    EXPECT_LT(took, o.wait_timeout / 3) << "epoch " << epoch;
  }
}

}  // namespace
}  // namespace sluice

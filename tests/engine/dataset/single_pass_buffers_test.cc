// A single pass over a loopback server reuses the buffers of the shards it
// has passed for the shards it receives next (ShardBufferPool): over an
// epoch of two dozen shards read in order, two at once, only a handful of
// buffers are ever allocated; and a batch's views keep their exact bytes
// while later shards are received into buffers passed shards left.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/shard_buffer_pool.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/tail_holding_server.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::TailHoldingServer;

// 6,000 samples of 40..240 bytes in shards of about 32 KiB: two dozen.
struct PooledShards {
  ScratchDir remote, cache;
  std::unique_ptr<DatasetReader> reader;
  size_t count = 0;
};

void MakePooledShards(PooledShards* s, std::optional<std::string> compression = std::nullopt) {
  testing::WriteSyntheticMds(s->remote.path(), 6000, uint64_t{32} << 10, compression);
  auto reader = DatasetReader::Open(s->remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  s->reader = std::move(*reader);
  s->count = s->reader->index().shards.size();
  ASSERT_GE(s->count, 20u);
}

// In order, two shards received at once, each in one request, no peek.
DatasetOptions InOrder(const PooledShards& s, const std::string& url) {
  DatasetOptions o = testing::OneStreamOptions(s.remote.path(), s.cache.path());
  o.streams[0].remote = url;
  o.streams[0].single_pass = true;
  o.streams[0].single_pass_part_size = 0;
  o.streams[0].download_retry = 0;
  o.plan.shuffle = false;
  o.peek_first_sample = false;
  o.fetch_concurrency = 2;
  return o;
}

ShardBufferPool::Counters Since(const ShardBufferPool::Counters& before) {
  ShardBufferPool::Counters now = ShardBufferPool::ProcessCountersForTesting();
  return {now.allocated - before.allocated, now.reused - before.reused};
}

// The shards' GETs the server has answered.
size_t ShardGetCount(const TailHoldingServer& server) {
  size_t n = 0;
  for (const TailHoldingServer::Answered& a : server.AnsweredGets()) {
    if (a.target.find(".mds") != std::string::npos) ++n;
  }
  return n;
}

// An in-order single pass of s's shards from a loopback server, every
// sample's bytes checked: the buffers its receives took from the pools,
// into *used, and the shards' GETs, into *gets.
void ReadInOrder(const PooledShards& s, ShardBufferPool::Counters* used, size_t* gets) {
  TailHoldingServer server(s.remote.path(), "none", 0);
  const ShardBufferPool::Counters before = ShardBufferPool::ProcessCountersForTesting();
  auto ds = StreamingDataset::Open(InOrder(s, server.url()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<std::string> bytes;
  const std::vector<int64_t> ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 16, &bytes);
  ASSERT_EQ(ids.size(), 6000u);
  for (size_t k = 0; k < ids.size(); ++k) {
    ASSERT_EQ(ids[k], static_cast<int64_t>(k));
    SampleFields reference;
    ASSERT_TRUE(s.reader->Read(static_cast<uint64_t>(k), &reference).ok());
    ASSERT_EQ(bytes[k], testing::FieldBytes(reference)) << k;
  }
  *used = Since(before);
  *gets = ShardGetCount(server);
}

TEST(SinglePassBuffers, AnInOrderPassAllocatesAHandfulOfBuffersForAllItsShards) {
  PooledShards s;
  ASSERT_NO_FATAL_FAILURE(MakePooledShards(&s));
  ShardBufferPool::Counters used;
  size_t gets = 0;
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(s, &used, &gets));
  // Every shard received once, each into a buffer from the pool: the
  // consumer's shards (a batch may straddle two), the prefetcher's window
  // and the two received ahead are the most held at once (5 allocated, of
  // 30 shards, on a quiet machine when this was written; a slow consumer
  // holds more at once, and the pool keeps two). Without reuse, one
  // buffer a shard.
  EXPECT_EQ(gets, s.count);
  EXPECT_EQ(used.allocated + used.reused, s.count);
  EXPECT_LE(used.allocated, s.count / 2) << "of " << s.count << " shards";
}

// A zstd shard's zip is received into a buffer from the pool and
// decompressed into another; the zip's goes back as soon as it is
// decompressed.
TEST(SinglePassBuffers, AnInOrderPassOfZstdShardsReusesTheZipsAndTheShardsBuffers) {
  PooledShards s;
  ASSERT_NO_FATAL_FAILURE(MakePooledShards(&s, "zstd"));
  ShardBufferPool::Counters used;
  size_t gets = 0;
  ASSERT_NO_FATAL_FAILURE(ReadInOrder(s, &used, &gets));
  EXPECT_EQ(gets, s.count);
  EXPECT_EQ(used.allocated + used.reused, 2 * s.count) << "a zip and a shard each";
  // (10 or fewer on a quiet machine; as above, more under load.)
  EXPECT_LE(used.allocated, s.count) << "of " << 2 * s.count << " buffers";
}

TEST(SinglePassBuffers, ABatchsViewsKeepTheirBytesWhileLaterShardsReuseBuffers) {
  PooledShards s;
  ASSERT_NO_FATAL_FAILURE(MakePooledShards(&s));
  TailHoldingServer server(s.remote.path(), "none", 0);
  auto ds = StreamingDataset::Open(InOrder(s, server.url()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  // Read in order to the end of the dataset's fourth shard, the last batch
  // its last samples: the consumer has then passed it, so only that
  // batch's views keep it, and the prefetcher goes on to receive later
  // shards into the buffers the passed shards left.
  uint64_t end = 0;
  for (size_t i = 0; i < 4; ++i) end += s.reader->index().shards[i].samples;
  std::vector<int64_t> batch(16);
  std::vector<SampleFields> fields;
  uint64_t read = 0;
  size_t n = 0;
  const ShardBufferPool::Counters before = ShardBufferPool::ProcessCountersForTesting();
  while (read < end) {
    Result<size_t> got =
        (*ds)->NextBatch(std::min<uint64_t>(16, end - read), batch.data(), &fields);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_GT(*got, 0u);
    n = *got;
    read += n;
  }
  ASSERT_EQ(batch[n - 1], static_cast<int64_t>(end - 1));
  // Hold the views until the fifth shard, the next one (always in the
  // prefetcher's window once the consumer is at the fourth's end), has
  // been received whole, and a shard has been received into a buffer the
  // passed ones left (whether before the last batch or after depends on
  // how far ahead the prefetcher ran).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((Since(before).reused == 0 || ShardGetCount(server) < 5) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(Since(before).reused, 0u) << "no shard was received into a reused buffer";
  ASSERT_GE(ShardGetCount(server), 5u);
  // Each sample's views show exactly its bytes.
  for (size_t k = 0; k < n; ++k) {
    SampleFields reference;
    ASSERT_TRUE(s.reader->Read(static_cast<uint64_t>(batch[k]), &reference).ok());
    EXPECT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(reference)) << batch[k];
  }
  // And the rest of the epoch reads as it should.
  uint64_t total = read;
  for (;;) {
    Result<size_t> got = (*ds)->NextBatch(16, batch.data(), &fields);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    if (*got == 0) break;
    for (size_t k = 0; k < *got; ++k) {
      ASSERT_EQ(batch[k], static_cast<int64_t>(total + k));
      SampleFields reference;
      ASSERT_TRUE(s.reader->Read(static_cast<uint64_t>(batch[k]), &reference).ok());
      ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(reference)) << batch[k];
    }
    total += *got;
  }
  EXPECT_EQ(total, 6000u);
}

}  // namespace
}  // namespace sluice


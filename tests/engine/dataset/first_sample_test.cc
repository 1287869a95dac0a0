// The first samples of a cold epoch come as soon as their shards are there:
// a batch call does not wait for the shards of its later samples.
#include <chrono>
#include <future>
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/stalling_file_server.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::StallingFileServer;

// Shuffled, no cache_limit, cold: the shard of a later position of the
// first batch never finishes downloading. The first call still returns at
// once with the samples before that position, and in plan order.
TEST(FirstSample, ABatchCallDoesNotWaitForItsLaterSamplesShards) {
  ScratchDir remote, cache;
  testing::WriteSyntheticMds(remote.path(), 400, 4000);
  auto reader = DatasetReader::Open(remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::vector<ShardEntry>& shards = (*reader)->index().shards;
  ASSERT_GE(shards.size(), 4u);
  auto shard_of = [&](int64_t id) {
    size_t g = 0;
    for (uint64_t end = shards[0].samples; static_cast<uint64_t>(id) >= end;) {
      end += shards[++g].samples;
    }
    return g;
  };

  DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
  o.plan.shuffle = true;
  o.plan.shuffle_seed = 5;
  o.plan.shuffle_block_size = 400;
  o.predownload = 64;
  o.streams[0].download_retry = 0;
  auto plan = [&]() -> std::vector<int64_t> {
    auto ds = StreamingDataset::Open(o);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    auto ids = (*ds)->WorkerIds(0, 0, 0, 1);
    EXPECT_TRUE(ids.ok());
    return ids.ok() ? *ids : std::vector<int64_t>{};
  }();
  ASSERT_EQ(plan.size(), 400u);
  // The first position whose shard differs from position 0's: that shard stalls.
  size_t stalled_at = 1;
  while (shard_of(plan[stalled_at]) == shard_of(plan[0])) ++stalled_at;
  ASSERT_LT(stalled_at, 64u);
  StallingFileServer server(remote.path(), shards[shard_of(plan[stalled_at])].raw_data.basename);

  o.streams[0].remote = server.url();
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(64);
  std::vector<SampleFields> fields;
  auto call = std::async(std::launch::async, [&] { return (*ds)->NextBatch(64, ids.data(), &fields); });
  // Generous: the call needs one small shard from loopback; waiting for the
  // stalled one would take until the server stops.
  ASSERT_EQ(call.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "the first call waited for the stalled shard";
  Result<size_t> n = call.get();
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_GE(*n, 1u);
  ASSERT_LE(*n, stalled_at);
  EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(*n)),
            std::vector<int64_t>(plan.begin(), plan.begin() + static_cast<std::ptrdiff_t>(*n)));
  server.Stop();  // the stalled download fails; destroying the dataset joins its thread
}

}  // namespace
}  // namespace sluice

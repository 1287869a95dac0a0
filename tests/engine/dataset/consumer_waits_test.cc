// A consumer's wait split by what the shard's open was doing meanwhile.
#include "engine/dataset/consumer_waits.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// An open at t0 + 10 ms: 20 ms for another process's download, 30 ms for
// room, 40 ms downloading, then 50 ms decoding (ends at t0 + 150 ms).
ShardOpenTiming Timing(Clock::time_point t0) {
  ShardOpenTiming t;
  t.start = t0 + milliseconds(10);
  t.peer_fetch = milliseconds(20);
  t.room = milliseconds(30);
  t.download = milliseconds(40);
  t.end = t0 + milliseconds(150);
  return t;
}

TEST(ConsumerWaits, AWaitSpanningTheWholeOpenIsSplitByItsSteps) {
  const auto t0 = Clock::now();
  const ShardOpenTiming timing = Timing(t0);
  ConsumerWaits w;
  w.Add(t0, t0 + milliseconds(160), &timing);
  EXPECT_EQ(w.total_ns, 160'000'000u);
  EXPECT_EQ(w.peer_download_ns, 20'000'000u);
  EXPECT_EQ(w.cache_room_ns, 30'000'000u);
  EXPECT_EQ(w.download_ns, 40'000'000u);
  EXPECT_EQ(w.decode_ns, 50'000'000u);
  EXPECT_EQ(w.other_ns, 20'000'000u);  // 10 ms before the open, 10 ms after
}

TEST(ConsumerWaits, AWaitThatBeganMidDownloadCountsOnlyTheOverlap) {
  const auto t0 = Clock::now();
  const ShardOpenTiming timing = Timing(t0);
  ConsumerWaits w;
  w.Add(t0 + milliseconds(80), t0 + milliseconds(120), &timing);  // download 60..100
  EXPECT_EQ(w.total_ns, 40'000'000u);
  EXPECT_EQ(w.download_ns, 20'000'000u);
  EXPECT_EQ(w.decode_ns, 20'000'000u);
  EXPECT_EQ(w.peer_download_ns + w.cache_room_ns + w.other_ns, 0u);
}

TEST(ConsumerWaits, WithoutATimingEverythingIsOther) {
  const auto t0 = Clock::now();
  ConsumerWaits w;
  w.Add(t0, t0 + milliseconds(5), nullptr);
  w.AddDownload(3'000'000);
  EXPECT_EQ(w.total_ns, 8'000'000u);
  EXPECT_EQ(w.other_ns, 5'000'000u);
  EXPECT_EQ(w.download_ns, 3'000'000u);
}

}  // namespace
}  // namespace sluice

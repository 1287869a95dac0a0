// PrefetchSchedule's decisions, step by step, without threads: each test
// plays the prefetcher's part (open what the schedule names, report it).
#include "engine/dataset/prefetch_schedule.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

using Handle = PrefetchSchedule::Handle;

// A distinct handle per shard (the schedule never looks inside).
Handle Shard(size_t shard) { return std::make_shared<const size_t>(shard); }

size_t ShardAt(const PrefetchSchedule& s, size_t q) {
  return *static_cast<const size_t*>(s.At(q));
}

// Plays the scan's thread once: opens the scan's shard (as the owner does
// when WalkOpen cannot move).
void OpenAtScan(PrefetchSchedule& s) {
  ASSERT_FALSE(s.WalkOpen());
  s.OpenedAtScan(Shard(s.shard_of(s.scan())));
}

TEST(PrefetchSchedule, TheScanOpensEachShardOnceAndWalksItsRun) {
  PrefetchSchedule s({0, 0, 1, 1, 1, 2}, {.window = 4}, {});
  EXPECT_TRUE(s.ScanHasWork());
  OpenAtScan(s);
  EXPECT_EQ(s.scan(), 1u);
  // Position 1 reads the open shard 0: walked without an open.
  EXPECT_TRUE(s.WalkOpen());
  EXPECT_EQ(s.scan(), 2u);
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());
  // The window (consumer 0 + 4) ends the walk inside shard 1's run.
  EXPECT_EQ(s.scan(), 4u);
  EXPECT_TRUE(s.WindowFull());
  EXPECT_FALSE(s.ScanHasWork());
  EXPECT_EQ(ShardAt(s, 0), 0u);
  EXPECT_EQ(ShardAt(s, 3), 1u);
}

TEST(PrefetchSchedule, TheConsumerReportsAQuarterWindowAtATimeUnlessAboutToWait) {
  PrefetchSchedule s({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {.window = 8}, {});
  for (int i = 0; i < 4; ++i) OpenAtScan(s);
  EXPECT_FALSE(s.MoveConsumer(1, 1));  // less than 8 / 4 and position 1 is ready
  EXPECT_EQ(s.consumer(), 0u);
  EXPECT_TRUE(s.MoveConsumer(2, 2));
  EXPECT_EQ(s.consumer(), 2u);
  EXPECT_TRUE(s.MoveConsumer(3, 4));  // needs position 4, not ready: about to wait
  EXPECT_EQ(s.consumer_moves(), 2u);
}

TEST(PrefetchSchedule, PassedShardsAreDroppedUnderACacheLimit) {
  PrefetchSchedule s({0, 1, 1, 1, 0}, {.window = 8}, {});
  OpenAtScan(s);
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());  // 2, 3 and the reuse of shard 0 at 4
  EXPECT_TRUE(s.OrderOpened());
  EXPECT_TRUE(s.MoveConsumer(4, 4));
  // Shard 0 is read again at 4 (its last seen use), shard 1 was passed.
  EXPECT_NE(s.OpenHandle(0), nullptr);
  EXPECT_EQ(s.OpenHandle(1), nullptr);
}

TEST(PrefetchSchedule, AShardReusedWithinAWindowStaysOpenWithoutALimit) {
  // Shard 0 at 0, shard 1 at 1..7, shard 0 again at 8; window 8.
  std::vector<size_t> order{0, 1, 1, 1, 1, 1, 1, 1, 0};
  for (bool keep : {false, true}) {
    PrefetchSchedule s(order, {.window = 8, .keep_reused = keep}, {});
    OpenAtScan(s);
    OpenAtScan(s);
    s.WalkOpen();
    EXPECT_EQ(s.scan(), 8u);  // the window
    EXPECT_TRUE(s.MoveConsumer(2, 2));
    // Its next use (8) is within a window of the consumer: kept only
    // without a cache limit.
    EXPECT_EQ(s.OpenHandle(0) != nullptr, keep) << keep;
  }
}

TEST(PrefetchSchedule, HelpersWaitForTheFirstShardThenTakeTheWindowsUnopenedShards) {
  PrefetchSchedule s({0, 0, 1, 1, 2, 3, 3, 4}, {.window = 6, .open_threads = 3}, {});
  // The first sample's shard has the link to itself.
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);
  OpenAtScan(s);
  s.WalkOpen();
  EXPECT_EQ(s.scan(), 2u);
  // Until the thread begins the scan's own shard (1, at 2), a helper may
  // take it (from position 3 of its run).
  EXPECT_EQ(s.NextToHelp(), 1u);
  s.BeginOpen(1);
  EXPECT_EQ(s.NextToHelp(), 2u);
  s.BeginOpen(2);
  EXPECT_EQ(s.NextToHelp(), 3u);
  s.BeginOpen(3);
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);  // shard 4 is beyond the window
  // The helper's shard waits among the early ones until the scan reaches it.
  s.HelperOpened(3, s.consumer_moves(), Shard(3));
  EXPECT_FALSE(s.InFlight(3));
  EXPECT_FALSE(s.WalkOpen());  // the scan is at shard 1, not open yet
  s.EndOpen(1);
  s.OpenedAtScan(Shard(1));
  s.WalkOpen();
  EXPECT_EQ(s.scan(), 4u);  // shard 2 is still in flight
  s.HelperOpened(2, s.consumer_moves(), Shard(2));
  s.WalkOpen();
  EXPECT_EQ(s.scan(), 6u);  // shard 3 taken from the early ones; the window ends
  EXPECT_EQ(ShardAt(s, 5), 3u);
}

TEST(PrefetchSchedule, WithoutALimitHelpersLookBeyondTheWindowUpToTheirNumber) {
  PrefetchSchedule s({0, 1, 2, 3, 4, 5}, {.window = 2, .keep_reused = true, .open_threads = 2}, {});
  OpenAtScan(s);
  OpenAtScan(s);
  EXPECT_TRUE(s.WindowFull());
  EXPECT_EQ(s.NextToHelp(), 2u);  // the order's next shard beyond the window
  s.BeginOpen(2);
  EXPECT_EQ(s.NextToHelp(), 3u);
  s.BeginOpen(3);
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);  // two opens ahead: as many as threads
}

TEST(PrefetchSchedule, OneThreadWithoutALimitOpensTwoShardsBeyondAFullWindow) {
  PrefetchSchedule s({0, 1, 2, 3, 4}, {.window = 1, .keep_reused = true}, {});
  OpenAtScan(s);
  EXPECT_TRUE(s.WindowFull());
  EXPECT_TRUE(s.ScanHasWork());
  size_t first = s.TakeBeyondWindow();
  EXPECT_EQ(first, 1u);
  s.OpenedEarly(first, Shard(first));
  EXPECT_TRUE(s.ScanHasWork());
  EXPECT_EQ(s.TakeBeyondWindow(), 2u);
  s.OpenedEarly(2, Shard(2));
  EXPECT_FALSE(s.ScanHasWork());
}

TEST(PrefetchSchedule, AHelperToldNotNowRestsUntilTheConsumerMoves) {
  PrefetchSchedule s({0, 1, 2, 3, 4, 5, 6, 7}, {.window = 8, .open_threads = 2, .try_open = true},
                     {});
  OpenAtScan(s);
  EXPECT_EQ(s.NextToHelp(), 2u);
  s.BeginOpen(2);
  s.HelperOpened(2, s.consumer_moves(), Handle());  // not now
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);
  s.WalkOpen();
  EXPECT_TRUE(s.MoveConsumer(1, 1));  // about to wait at 1
  EXPECT_EQ(s.NextToHelp(), 2u);
}

TEST(PrefetchSchedule, TheScanWaitingForRoomTakesBackWhatHelpersOpenedAhead) {
  PrefetchSchedule s({0, 1, 2, 3}, {.window = 4, .open_threads = 2, .try_open = true}, {});
  OpenAtScan(s);
  s.BeginOpen(2);
  s.HelperOpened(2, s.consumer_moves(), Shard(2));
  s.RoomWanted();
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);  // helpers take no room meanwhile
  s.BeginOpen(3);
  s.HelperOpened(3, s.consumer_moves(), Shard(3));  // given back, not kept
  s.RoomWaitEnded();
  s.OpenedAtScan(Shard(1));
  EXPECT_FALSE(s.WalkOpen());  // shard 2 was given back: the scan opens it again
  EXPECT_EQ(s.scan(), 2u);
  EXPECT_EQ(s.NextToHelp(), 3u);
}

TEST(PrefetchSchedule, AHelpersFailureWaitsForTheScanButAWaitsEndIsTriedAgain) {
  PrefetchSchedule s({0, 1, 2, 3}, {.window = 4, .open_threads = 2}, {});
  OpenAtScan(s);
  s.BeginOpen(2);
  s.HelperOpened(2, s.consumer_moves(), CorruptError("shard 2 is bad"));
  s.BeginOpen(3);
  s.HelperOpened(3, s.consumer_moves(), DeadlineExceededError("no room"));
  EXPECT_EQ(s.NextToHelp(), 3u);  // a wait's end: open it again
  std::optional<Status> failed = s.TakeFailure(2);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->message(), "shard 2 is bad");
  EXPECT_FALSE(s.TakeFailure(2).has_value());
}

TEST(PrefetchSchedule, SeedsServeTheFirstWindowOnly) {
  PrefetchSchedule::HandleMap seed;
  seed[1] = Shard(1);
  seed[3] = Shard(3);
  PrefetchSchedule s({0, 1, 2, 3}, {.window = 2}, std::move(seed));
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());  // shard 1 was seeded
  EXPECT_EQ(s.scan(), 2u);
  EXPECT_TRUE(s.MoveConsumer(2, 2));
  s.ForgetSeedsPastFirstWindow();
  s.OpenedAtScan(Shard(2));
  EXPECT_FALSE(s.WalkOpen());  // shard 3's seed is gone
  EXPECT_EQ(s.scan(), 3u);
}

TEST(PrefetchSchedule, TheNextOrderStartsOnceThisOneIsOpenAndTheConsumerNearItsEnd) {
  PrefetchSchedule s({0, 1, 2, 3}, {.window = 2, .has_next = true}, {});
  OpenAtScan(s);
  OpenAtScan(s);
  EXPECT_FALSE(s.ScanHasWork());  // the window is full, the order not open
  EXPECT_TRUE(s.MoveConsumer(2, 2));
  OpenAtScan(s);
  OpenAtScan(s);
  EXPECT_TRUE(s.OrderOpened());
  EXPECT_TRUE(s.ScanHasWork());  // consumer 2 + window 2 reaches the end
}

}  // namespace
}  // namespace sluice

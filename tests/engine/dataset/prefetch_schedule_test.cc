// PrefetchSchedule's decisions, step by step, without threads: each test
// plays the prefetcher's part (open what the schedule names, report it).
#include "engine/dataset/prefetch_schedule.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
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

// The consumer read shard 0's samples from its download in flight and
// moved past them before the scan opened the shard: once the scan has
// walked the shard's run, it holds nothing of it (its pin would hold cache
// room while the consumer waits further on and reports no move), and what
// lies ahead of the consumer is kept.
TEST(PrefetchSchedule, AShardTheConsumerPassedBeforeTheScanOpenedItIsDroppedOnceWalked) {
  PrefetchSchedule s({0, 0, 0, 1, 1, 2}, {.window = 8}, {});
  EXPECT_TRUE(s.MoveConsumer(3, 3));
  EXPECT_EQ(s.scan(), 0u);
  Handle zero = Shard(0);
  s.OpenedAtScan(zero);
  EXPECT_TRUE(s.WalkOpen());  // positions 1 and 2 read the shard opened at 0
  EXPECT_EQ(s.scan(), 3u);
  EXPECT_EQ(s.OpenHandle(0), nullptr);
  EXPECT_EQ(zero.use_count(), 1);  // only this test holds it
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());
  EXPECT_EQ(s.scan(), 5u);
  EXPECT_NE(s.OpenHandle(1), nullptr);
  EXPECT_EQ(s.open_shards(), 1u);
}

// A single pass (hold_room set, 1 a shard): shards 0 and 1 are each read again far
// beyond the window of 2. With room for one held shard, the first to be
// passed (0) is held for its next use, and 1 is let go (LetGo: its later
// uses read by ranged reads); with none, both are let go; without
// hold_room (not a single pass) neither is held nor let go.
TEST(PrefetchSchedule, ASinglePassHoldsPassedShardsForTheirNextUseWithinItsBudget) {
  const std::vector<size_t> order{0, 1, 2, 2, 2, 2, 2, 2, 0, 1};
  for (const std::optional<size_t> hold : {std::optional<size_t>(), std::optional<size_t>(0),
                                           std::optional<size_t>(1)}) {
    const std::string what = hold ? "hold " + std::to_string(*hold) : "no hold";
    PrefetchSchedule s(order, {.window = 2, .keep_reused = true, .hold_room = hold}, {});
    OpenAtScan(s);
    OpenAtScan(s);
    EXPECT_TRUE(s.MoveConsumer(1, 2));  // shard 0 passed: held or not
    OpenAtScan(s);                      // shard 2 at position 2
    EXPECT_TRUE(s.MoveConsumer(3, 3));  // shard 1 passed
    EXPECT_EQ(s.OpenHandle(0) != nullptr, hold == 1u) << what;
    EXPECT_EQ(s.OpenHandle(1), nullptr) << what;
    EXPECT_EQ(s.held_shards(), hold == 1u ? 1u : 0u) << what;
    EXPECT_EQ(s.LetGo(0), hold == 0u) << what;
    EXPECT_EQ(s.LetGo(1), hold.has_value()) << what;
    EXPECT_FALSE(s.LetGo(2)) << what;
    // The walk reaches position 8: a held shard 0 is there without an
    // open, and is no longer counted as held.
    EXPECT_TRUE(s.MoveConsumer(7, 7));
    s.WalkOpen();
    if (hold == 1u) {
      EXPECT_EQ(s.scan(), 9u) << what;
      EXPECT_EQ(ShardAt(s, 8), 0u);
      EXPECT_EQ(s.held_shards(), 0u);
    } else {
      EXPECT_EQ(s.scan(), 8u) << what;  // shard 0 to open again
    }
  }
}

// A single pass played through by one consumer reading a position at a
// time (window 2): every shard the scan opens is received whole (one GET)
// unless it was let go (LetGo), and then each of its positions read is one
// ranged GET of its sample. Returns the GETs; `received`: the shards
// received whole, in order; `held`: those ever held for a later use.
size_t PassGets(const std::vector<size_t>& order, uint64_t hold_room,
                std::function<uint64_t(size_t)> shard_room, std::vector<size_t>* received,
                std::set<size_t>* held) {
  struct Opened {
    size_t shard;
    bool ranged;
  };
  PrefetchSchedule s(order, {.window = 2, .keep_reused = true, .hold_room = hold_room,
                             .shard_room = std::move(shard_room)},
                     {});
  size_t gets = 0;
  for (size_t c = 0; c < order.size(); ++c) {
    s.MoveConsumer(c, c);
    for (s.WalkOpen(); !s.WindowFull() && s.scan() < order.size(); s.WalkOpen()) {
      const size_t shard = s.shard_of(s.scan());
      const bool ranged = s.LetGo(shard);
      if (!ranged) {
        ++gets;
        received->push_back(shard);
      }
      s.OpenedAtScan(std::make_shared<const Opened>(Opened{shard, ranged}));
    }
    for (size_t g = 0; g < order.size(); ++g) {
      if (s.Held(g)) held->insert(g);
    }
    EXPECT_GT(s.scan(), c);
    const auto* at = static_cast<const Opened*>(s.At(c));
    EXPECT_EQ(at->shard, order[c]) << "position " << c;
    if (at->ranged) ++gets;
  }
  return gets;
}

// Shards of very different sizes (0 and the filler 4: 100 bytes; 1-3: 30
// each) with room for 100 bytes: 1, 2 and 3, passed first, are held
// together (90 bytes), and 0 does not fit, so it is let go. Counted at the
// largest shard's size, only 1 was held, and 2, 3 and 0 were let go: 5
// receives and 3 ranged sample reads.
TEST(PrefetchSchedule, ASinglePassCountsEachHeldShardAtItsOwnSize) {
  const std::vector<size_t> order{1, 2, 3, 0, 4, 4, 4, 4, 4, 4, 1, 2, 3, 0};
  auto room = [](size_t shard) -> uint64_t { return shard == 0 || shard == 4 ? 100 : 30; };
  std::vector<size_t> received;
  std::set<size_t> held;
  const size_t gets = PassGets(order, 100, room, &received, &held);
  EXPECT_EQ(held, (std::set<size_t>{1, 2, 3}));
  EXPECT_EQ(received, (std::vector<size_t>{1, 2, 3, 0, 4}));
  EXPECT_EQ(gets, 5u + 1u);  // five receives, and shard 0's last sample by a ranged read
}

// Room for one shard: shard 0 is passed first and used once more at the
// end; shard 1 is passed next and used three times soon after; shard 2
// is passed after those three and used four times more. The shard used
// soonest is kept (Belady's rule): 0 is let go for 1, and 2 is held once
// the scan has met 1's use: 3 receives and 1 ranged sample read (0's).
// Holding the first to ask kept 0 to the end and let 1 and 2 go: 3
// receives and 3 + 4 ranged sample reads.
TEST(PrefetchSchedule, ASinglePassPastItsRoomKeepsTheShardsUsedSoonest) {
  const std::vector<size_t> order{0, 1, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 0};
  std::vector<size_t> received;
  std::set<size_t> held;
  const size_t gets = PassGets(order, 1, nullptr, &received, &held);
  EXPECT_EQ(received, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(held, (std::set<size_t>{0, 1, 2}));  // 0 until 1 took its place
  EXPECT_EQ(gets, 3u + 1u);
}

// Room for one shard: shard 0 is passed first and read six times more at
// the end; shard 1 is passed next and read once more, sooner. Letting a
// held shard go costs a ranged read for each of its samples left, so 0
// (6 left over 10 positions) is worth holding more than 1 (1 left over
// 5): 1 is let go, 3 receives and 1 ranged sample read. By next use alone
// (Belady's rule) 0 was let go for 1: 3 receives and 6 ranged reads.
TEST(PrefetchSchedule, ASinglePassKeepsTheHeldShardWithMoreSamplesLeftPerPosition) {
  const std::vector<size_t> order{0, 1, 9, 9, 9, 9, 1, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0};
  std::vector<size_t> received;
  std::set<size_t> held;
  const size_t gets = PassGets(order, 1, nullptr, &received, &held);
  EXPECT_EQ(received, (std::vector<size_t>{0, 1, 9}));
  EXPECT_EQ(held, (std::set<size_t>{0}));
  EXPECT_EQ(gets, 3u + 1u);
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

// hold_first: until EndHold only position 0's shard opens; a consumer
// waiting at a position of another shard (shard 0 skipped) ends the hold
// as EndHold does; then the scan and helpers go on.
TEST(PrefetchSchedule, HeldUntilTheFirstReadOnlyTheFirstShardOpens) {
  PrefetchSchedule s({0, 0, 1, 2, 3, 3, 4},
                     {.window = 7, .keep_reused = true, .open_threads = 3, .hold_first = true}, {});
  EXPECT_TRUE(s.ScanHasWork());
  OpenAtScan(s);
  s.WalkOpen();
  EXPECT_EQ(s.scan(), 2u);
  EXPECT_FALSE(s.ScanHasWork());
  EXPECT_FALSE(s.OthersHaveWork());
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);
  // A consumer walking without waiting, or waiting within shard 0's run,
  // changes nothing.
  s.MoveConsumer(0, 1);
  EXPECT_FALSE(s.ConsumerWaitsAt(1));
  EXPECT_FALSE(s.ScanHasWork());
  EXPECT_EQ(s.NextToHelp(), SIZE_MAX);
  // The first sample is read: the scan and the helpers take the window.
  EXPECT_TRUE(s.EndHold());
  EXPECT_FALSE(s.EndHold());
  EXPECT_TRUE(s.ScanHasWork());
  EXPECT_EQ(s.NextToHelp(), 2u);  // shard 2, past the scan's own
}

TEST(PrefetchSchedule, HeldUntilTheConsumerWaitsAtAnotherShard) {
  PrefetchSchedule s({0, 0, 1, 2, 3, 3, 4},
                     {.window = 7, .keep_reused = true, .open_threads = 3, .hold_first = true}, {});
  OpenAtScan(s);
  s.WalkOpen();
  EXPECT_FALSE(s.ScanHasWork());
  // It waits at 2 (shard 0 skipped): the hold ends, the scan opens shard
  // 1 and the helpers the window past it.
  s.MoveConsumer(0, 2);
  EXPECT_TRUE(s.ConsumerWaitsAt(2));
  EXPECT_FALSE(s.ConsumerWaitsAt(3));
  EXPECT_TRUE(s.ScanHasWork());
  EXPECT_EQ(s.NextToHelp(), 2u);  // shard 2, past the scan's own
  EXPECT_FALSE(s.EndHold());
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

// --- An order in parts (a pass planned in windows).

// Plays the prefetcher's threads and a consumer over `order`, in lock
// step (no threads): the scan's thread works until it has nothing to do,
// `helpers` helpers open what they are given, then the consumer takes a
// batch of what is ready. With `part` > 0 the schedule gets the order in
// parts of that size, extended whenever a decision wants more (as
// ShardPrefetcher does). Returns every decision: each open (by whom, which
// shard) and what is open after each consumer move.
std::vector<std::string> PlayOrder(const std::vector<size_t>& order, size_t part,
                                   const PrefetchSchedule::Options& options, size_t batch) {
  std::vector<std::string> log;
  size_t given = part == 0 ? order.size() : std::min(part, order.size());
  auto slice = [&](size_t from, size_t to) {
    return std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(from),
                               order.begin() + static_cast<std::ptrdiff_t>(to));
  };
  PrefetchSchedule s(slice(0, given), options, {}, /*complete=*/given == order.size());
  auto extend = [&] {
    const size_t to = std::min(given + part, order.size());
    s.Append(slice(given, to), to == order.size());
    given = to;
  };
  const size_t n = order.size();
  size_t pos = 0;
  while (pos < n) {
    while (true) {
      bool work = s.ScanHasWork();
      if (s.WantsMore()) {
        extend();
        continue;
      }
      if (options.open_threads > 1) {
        const size_t h = s.NextToHelp();
        if (s.WantsMore()) {
          extend();
          continue;
        }
        if (h != SIZE_MAX) {
          log.push_back("help " + std::to_string(h));
          s.BeginOpen(h);
          s.HelperOpened(h, s.consumer_moves(), Handle(Shard(h)));
          continue;
        }
        work = s.ScanHasWork();
      }
      if (!work || s.OrderOpened()) break;
      if (s.WindowFull()) {
        const size_t g = s.TakeBeyondWindow();
        log.push_back("beyond " + std::to_string(g));
        s.OpenedEarly(g, Shard(g));
        continue;
      }
      if (s.WalkOpen()) continue;
      const size_t g = s.shard_of(s.scan());
      log.push_back("scan " + std::to_string(g));
      s.OpenedAtScan(Shard(g));
    }
    EXPECT_GT(s.scan(), pos) << "the scan made no progress at " << pos;
    if (s.scan() <= pos) break;
    pos = std::min(s.scan(), pos + batch);
    if (pos == n) break;
    while (!s.KnownTo(pos)) extend();
    if (s.MoveConsumer(pos, pos)) log.push_back("consumer " + std::to_string(pos) + " open " +
                                                std::to_string(s.open_shards()));
    s.WalkOpen();
    if (s.scan() > pos) {
      EXPECT_EQ(ShardAt(s, pos), order[pos]);
    }
  }
  EXPECT_EQ(given, order.size());
  return log;
}

TEST(PrefetchSchedule, AnOrderInPartsGetsTheWholeOrdersDecisions) {
  // Runs of shards revisited at random (a shuffle), and in order.
  std::vector<size_t> shuffled;
  uint64_t x = 12345;
  while (shuffled.size() < 600) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const size_t shard = (x >> 33) % 23, run = 1 + (x >> 20) % 9;
    for (size_t k = 0; k < run; ++k) shuffled.push_back(shard);
  }
  std::vector<size_t> in_order;
  for (size_t g = 0; g < 40; ++g) in_order.insert(in_order.end(), 13, g);
  for (const auto* order : {&shuffled, &in_order}) {
    for (bool keep : {false, true}) {
      for (size_t threads : {1, 3}) {
        for (size_t window : {1, 4, 30}) {
          const PrefetchSchedule::Options options{.window = window, .keep_reused = keep, .open_threads = threads};
          const std::vector<std::string> whole = PlayOrder(*order, 0, options, 5);
          ASSERT_FALSE(whole.empty());
          for (size_t part : {1, 7, 64}) {
            EXPECT_EQ(PlayOrder(*order, part, options, 5), whole)
                << (order == &shuffled ? "shuffled" : "in order") << " keep_reused " << keep << " threads "
                << threads << " window " << window << " part " << part;
          }
        }
      }
    }
  }
}

TEST(PrefetchSchedule, AnIncompleteOrderWantsMoreAtTheWindowAndFreesPassedParts) {
  PrefetchSchedule s({0, 1, 2}, {.window = 4}, {}, /*complete=*/false);
  EXPECT_TRUE(s.WantsMore());  // the window reaches position 3, not known yet
  EXPECT_FALSE(s.KnownTo(0));
  s.Append({3, 4, 5}, false);
  EXPECT_FALSE(s.WantsMore());
  EXPECT_EQ(s.size(), 6u);
  const PrefetchSchedule::Part* first = s.PartOf(0);
  EXPECT_EQ(first->begin, 0u);
  EXPECT_EQ(s.PartOf(4)->begin, 3u);
  for (int i = 0; i < 4; ++i) OpenAtScan(s);
  EXPECT_FALSE(s.OrderOpened());  // known positions all seen, but not the last part
  s.Append({6}, true);
  EXPECT_TRUE(s.complete());
  EXPECT_TRUE(s.KnownTo(6));
  EXPECT_TRUE(s.MoveConsumer(4, 4));
  // The first part is passed: freed; the second stays.
  EXPECT_EQ(s.PartOf(4)->begin, 3u);
  EXPECT_EQ(s.PartOf(6)->begin, 6u);
}

// A consumer served from a download in flight passes whole parts before the
// scan has walked them: they stay until the scan has passed them too (the
// scan walked freed memory, a crash of a cold in-order pass of 500,000
// samples in parts of 16,384 positions).
TEST(PrefetchSchedule, APartTheConsumerPassedAheadOfTheScanStaysUntilTheScanPassesIt) {
  PrefetchSchedule s({0, 0, 0}, {.window = 8}, {}, /*complete=*/false);
  s.Append({0, 0, 1}, false);
  s.Append({1}, true);
  EXPECT_TRUE(s.MoveConsumer(4, 4));  // past the first part; the scan is at 0
  EXPECT_EQ(s.scan(), 0u);
  EXPECT_EQ(s.PartOf(0)->begin, 0u);
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());
  EXPECT_EQ(s.scan(), 5u);
  for (size_t q : {1u, 2u, 3u, 4u}) EXPECT_EQ(ShardAt(s, q), 0u) << q;
  OpenAtScan(s);
  EXPECT_EQ(ShardAt(s, 5), 1u);
  EXPECT_TRUE(s.MoveConsumer(6, 6));
  EXPECT_EQ(s.PartOf(6)->begin, 6u);  // both passed: the first two parts are freed
}

// 16 bytes a position: shards and next uses are 32-bit (a next use as a
// distance, so a 4B-sample order fits), and a window beyond what that
// distance can decide is taken as the largest it can. The decisions of the
// largest shard number are those of a small one (as in
// PassedShardsAreDroppedUnderACacheLimit).
TEST(PrefetchSchedule, PositionsHold32BitShardsAndNextUsesAndTheWindowIsBounded) {
  static_assert(sizeof(decltype(PrefetchSchedule::Part::shard_of)::value_type) == 4);
  static_assert(sizeof(decltype(PrefetchSchedule::Part::next_use)::value_type) == 4);
  PrefetchSchedule huge({0}, {.window = SIZE_MAX}, {});
  EXPECT_EQ(huge.window(), PrefetchSchedule::kMaxWindow);
  const size_t big = PrefetchSchedule::kMaxShards - 1;
  PrefetchSchedule s({big, 1, 1, 1, big}, {.window = 8}, {});
  EXPECT_EQ(s.shard_of(0), big);
  OpenAtScan(s);
  OpenAtScan(s);
  EXPECT_TRUE(s.WalkOpen());
  EXPECT_TRUE(s.MoveConsumer(4, 4));
  EXPECT_NE(s.OpenHandle(big), nullptr);  // read again at 4
  EXPECT_EQ(s.OpenHandle(1), nullptr);
  EXPECT_EQ(ShardAt(s, 4), big);
}

}  // namespace
}  // namespace sluice

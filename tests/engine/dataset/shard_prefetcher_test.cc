// ShardPrefetcher's shard lifetimes, with an opener that counts opens.
#include "engine/dataset/shard_prefetcher.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace sluice {
namespace {

struct CountingOpener {
  std::mutex mu;
  std::map<size_t, int> opens;
  ShardPrefetcher::Opener Get() {
    return [this](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
      std::lock_guard<std::mutex> lock(mu);
      ++opens[shard];
      return OpenedShard::Skipped();  // a stand-in: only opens are counted
    };
  }
};

// Shard 0 at position 0, shard 1 at 1..7, shard 0 again at 8; window 8.
// The scan cannot see position 8 before the consumer first reports progress
// (at 1 or 2), and then shard 0's last seen use (0) is behind the consumer
// though it is read again within a window.
std::vector<size_t> ReuseJustPastTheScan() { return {0, 1, 1, 1, 1, 1, 1, 1, 0}; }

void Drain(bool keep_reused, std::map<size_t, int>* opens) {
  CountingOpener opener;
  {
    ShardPrefetcher prefetcher(ReuseJustPastTheScan(), 8, opener.Get(), nullptr, {}, keep_reused);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      auto got = prefetcher.Acquire(p, p, &waited);
      ASSERT_TRUE(got.ok()) << p;
      EXPECT_GT(*got, p);
      EXPECT_TRUE(prefetcher.At(p)->skipped());
    }
  }
  *opens = opener.opens;
}

TEST(ShardPrefetcher, PassedShardIsReleasedAndOpenedAgainUnderACacheLimit) {
  std::map<size_t, int> opens;
  Drain(/*keep_reused=*/false, &opens);
  EXPECT_EQ(opens, (std::map<size_t, int>{{0, 2}, {1, 1}}));
}

TEST(ShardPrefetcher, ShardReusedWithinAWindowStaysOpenWithoutALimit) {
  std::map<size_t, int> opens;
  Drain(/*keep_reused=*/true, &opens);
  EXPECT_EQ(opens, (std::map<size_t, int>{{0, 1}, {1, 1}}));
}

// A reuse further than a window away is not worth holding the shard for.
TEST(ShardPrefetcher, ShardReusedBeyondAWindowIsReleased) {
  CountingOpener opener;
  std::vector<size_t> order{0};
  order.insert(order.end(), 20, 1);
  order.push_back(0);
  {
    ShardPrefetcher prefetcher(order, 4, opener.Get(), nullptr, {}, /*keep_reused=*/true);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      ASSERT_TRUE(prefetcher.Acquire(p, p, &waited).ok()) << p;
    }
  }
  EXPECT_EQ(opener.opens, (std::map<size_t, int>{{0, 2}, {1, 1}}));
}

std::map<size_t, int> OpensAfter(CountingOpener* opener, size_t want_shards) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(opener->mu);
      if (opener->opens.size() >= want_shards) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Long enough for a wrong extra open to show.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::lock_guard<std::mutex> lock(opener->mu);
  return opener->opens;
}

// Without a cache limit, a full window does not stop the thread: it opens
// the next two shards beyond it, and no more, while the consumer stays put.
TEST(ShardPrefetcher, OpensTwoShardsBeyondAFullWindowWithoutALimit) {
  CountingOpener opener;
  ShardPrefetcher prefetcher({0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}, 2, opener.Get(), nullptr, {},
                             /*keep_reused=*/true);
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited).ok());
  EXPECT_EQ(OpensAfter(&opener, 3), (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}}));
  for (size_t p = 0; p < prefetcher.size(); ++p) {
    auto ready = prefetcher.Acquire(p, p, &waited);
    ASSERT_TRUE(ready.ok()) << p;
    EXPECT_TRUE(prefetcher.At(p)->skipped());
  }
  EXPECT_EQ(OpensAfter(&opener, 4), (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

// Under a cache limit the window is the bound: its room is accounted for.
TEST(ShardPrefetcher, OpensNothingBeyondTheWindowUnderACacheLimit) {
  CountingOpener opener;
  ShardPrefetcher prefetcher({0, 0, 0, 1, 1, 1, 2, 2, 2}, 2, opener.Get());
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited).ok());
  EXPECT_EQ(OpensAfter(&opener, 1), (std::map<size_t, int>{{0, 1}}));
}

// Without a cache limit, open threads look beyond a full window: they keep
// open_threads shards opened ahead of the scan, and no more, while the
// consumer stays put; each step of the consumer into the next shard lets
// one more be opened.
TEST(ShardPrefetcher, OpenThreadsKeepThatManyShardsAheadBeyondAFullWindowWithoutALimit) {
  CountingOpener opener;
  std::vector<size_t> order;
  for (size_t shard = 0; shard < 8; ++shard) order.insert(order.end(), 3, shard);
  ShardPrefetcher prefetcher(order, 2, opener.Get(), nullptr, {}, /*keep_reused=*/true,
                             /*open_threads=*/4);
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited).ok());
  EXPECT_EQ(OpensAfter(&opener, 5),
            (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}));
  ASSERT_TRUE(prefetcher.Acquire(3, 3, &waited).ok());  // into shard 1
  EXPECT_EQ(OpensAfter(&opener, 6),
            (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}}));
  for (size_t p = 3; p < prefetcher.size(); ++p) {
    ASSERT_TRUE(prefetcher.Acquire(p, p, &waited).ok()) << p;
    EXPECT_TRUE(prefetcher.At(p)->skipped());
  }
  std::map<size_t, int> once;
  for (size_t shard = 0; shard < 8; ++shard) once[shard] = 1;
  EXPECT_EQ(OpensAfter(&opener, 8), once);
}

// Under a cache limit the window stays the bound, with open threads too.
TEST(ShardPrefetcher, OpenThreadsOpenNothingBeyondTheWindowUnderACacheLimit) {
  CountingOpener opener;
  ShardPrefetcher prefetcher({0, 0, 0, 1, 1, 1, 2, 2, 2}, 2, opener.Get(), nullptr, {},
                             /*keep_reused=*/false, /*open_threads=*/4);
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited).ok());
  EXPECT_EQ(OpensAfter(&opener, 1), (std::map<size_t, int>{{0, 1}}));
}

// A cache of `room` slots: an opened shard holds one until its last
// reference goes. The waiting opener polls for a slot (2 s at most); the
// try opener takes one only if free, and never opens `busy` (as if another
// process fetched it).
struct SlotCache {
  std::mutex mu;
  size_t room = 0, used = 0, max_used = 0;
  size_t busy = SIZE_MAX;
  Result<std::shared_ptr<const OpenedShard>> Take() {
    ++used;
    max_used = std::max(max_used, used);
    auto slot = std::shared_ptr<int>(new int(0), [this](int* p) {
      delete p;
      std::lock_guard<std::mutex> lock(mu);
      --used;
    });
    return std::shared_ptr<const OpenedShard>(slot, OpenedShard::Skipped().get());
  }
  ShardPrefetcher::Opener Waiting() {
    return [this](size_t, const std::atomic<bool>* cancel) -> Result<std::shared_ptr<const OpenedShard>> {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (true) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (used < room) return Take();
        }
        if (cancel->load()) return CancelledError("cancelled");
        if (std::chrono::steady_clock::now() > deadline) return DeadlineExceededError("no room");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    };
  }
  ShardPrefetcher::TryOpener Trying() {
    return [this](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
      std::lock_guard<std::mutex> lock(mu);
      if (shard == busy || used >= room) return std::shared_ptr<const OpenedShard>();
      return Take();
    };
  }
};

// With a try opener, helpers open ahead only with room to spare, and when
// the scan's own shard cannot be had without waiting, the shards they hold
// ahead go first: the reader never waits for room that its own extra
// shards hold. Here shard 1 is never had without waiting, and the helpers
// would otherwise fill both slots with shards 2 and 3.
TEST(ShardPrefetcher, ExtraOpensNeverHoldTheRoomTheScanWaitsFor) {
  SlotCache cache;
  cache.room = 2;
  cache.busy = 1;
  ShardPrefetcher prefetcher({0, 1, 2, 3, 4, 5}, 6, cache.Waiting(), nullptr, {},
                             /*keep_reused=*/false, /*open_threads=*/3, cache.Trying());
  uint64_t waited = 0;
  for (size_t p = 0; p < prefetcher.size(); ++p) {
    auto got = prefetcher.Acquire(p, p, &waited);
    ASSERT_TRUE(got.ok()) << p << ": " << got.status().ToString();
    EXPECT_GT(*got, p);
    if (p == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // helpers fill up
  }
  std::lock_guard<std::mutex> lock(cache.mu);
  EXPECT_EQ(cache.max_used, 2u);
}

TEST(ShardPrefetcher, AcquireReturnsTheReadyRunWithinAWindowOfTheConsumer) {
  CountingOpener opener;
  ShardPrefetcher prefetcher({0, 0, 1, 1, 2, 2}, 2, opener.Get());
  uint64_t waited = 0;
  auto ready = prefetcher.Acquire(0, 0, &waited);
  ASSERT_TRUE(ready.ok());
  EXPECT_GE(*ready, 1u);
  EXPECT_LE(*ready, 2u) << "the scan stays within a window of the consumer";
  EXPECT_EQ(prefetcher.At(0), OpenedShard::Skipped().get());
  // Position 5 is a window or more past the consumer: not waited for.
  ready = prefetcher.Acquire(0, 5, &waited);
  ASSERT_TRUE(ready.ok());
  EXPECT_LE(*ready, 2u);
  ready = prefetcher.Acquire(4, 5, &waited);
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(*ready, 6u);
  EXPECT_EQ(prefetcher.At(5), OpenedShard::Skipped().get());
  EXPECT_EQ(opener.opens, (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(prefetcher.Acquire(4, 6, &waited).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(prefetcher.Acquire(5, 4, &waited).status().code(), StatusCode::kOutOfRange);
}

// A shard read by a run of positions (longer than the window, so the scan
// meets it in pieces) stays open until the consumer passes the run's last
// position, and goes then, under a cache limit.
TEST(ShardPrefetcher, AShardReadByARunGoesWhenTheConsumerPassesItsLastPosition) {
  std::mutex mu;
  std::map<size_t, std::weak_ptr<const int>> alive;  // shard -> its open's token
  ShardPrefetcher::Opener opener = [&](size_t shard, const std::atomic<bool>*)
      -> Result<std::shared_ptr<const OpenedShard>> {
    auto token = std::make_shared<const int>(0);
    std::lock_guard<std::mutex> lock(mu);
    alive[shard] = token;
    // Shares the token's lifetime: the token expires when the prefetcher
    // lets go of this open.
    return std::shared_ptr<const OpenedShard>(token, OpenedShard::Skipped().get());
  };
  std::vector<size_t> order(6, 0);
  order.insert(order.end(), 6, 1);
  ShardPrefetcher prefetcher(order, 4, opener);
  uint64_t waited = 0;
  auto expired = [&](size_t shard) {
    std::lock_guard<std::mutex> lock(mu);
    return alive.count(shard) == 0 || alive[shard].expired();
  };
  // Two positions per batch: the scan walks several positions of the run
  // at once.
  for (size_t p = 0; p < 6; p += 2) {
    auto ready = prefetcher.Acquire(p, p + 1, &waited);
    ASSERT_TRUE(ready.ok()) << p;
    EXPECT_GT(*ready, p + 1);
    EXPECT_EQ(prefetcher.At(p + 1), OpenedShard::Skipped().get());
    EXPECT_FALSE(expired(0)) << "shard 0 went before positions " << p << ".." << p + 1
                             << " were read";
  }
  ASSERT_TRUE(prefetcher.Acquire(6, 6, &waited).ok());
  EXPECT_TRUE(expired(0)) << "shard 0 still open after the consumer passed its last position";
  EXPECT_FALSE(expired(1));
}

TEST(ShardPrefetcher, AnOpenErrorComesWhenTheConsumerNeedsItsPosition) {
  ShardPrefetcher prefetcher(
      {0, 0, 1, 1}, 4, [](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
        if (shard == 1) return NotFoundError("shard 1 is gone");
        return OpenedShard::Skipped();
      });
  uint64_t waited = 0;
  auto ready = prefetcher.Acquire(0, 1, &waited);
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(*ready, 2u) << "positions 0 and 1 are readable before the failure";
  auto failed = prefetcher.Acquire(2, 2, &waited);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(failed.status().message(), "prefetching sample position 2: shard 1 is gone");
}

// An exception on the prefetch thread would terminate the process (a Python
// trainer with it): one the opener throws is that shard's open error.
TEST(ShardPrefetcher, AnOpenerThatThrowsGivesTheConsumerAnError) {
  ShardPrefetcher prefetcher(
      {0, 0, 7, 7}, 4, [](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
        if (shard == 7) throw std::bad_alloc();
        return OpenedShard::Skipped();
      });
  uint64_t waited = 0;
  auto ready = prefetcher.Acquire(0, 1, &waited);
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(*ready, 2u) << "positions 0 and 1 are readable before the failure";
  auto failed = prefetcher.Acquire(2, 2, &waited);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().ToString(),
            "i/o error: prefetching sample position 2: opening shard 7: out of memory "
            "(std::bad_alloc)");
  // Every later call says the same.
  EXPECT_EQ(prefetcher.Acquire(3, 3, &waited).status().message(), failed.status().message());

  ShardPrefetcher other(
      {3}, 1, [](size_t, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
        throw std::runtime_error("boom");
      });
  EXPECT_EQ(other.Acquire(0, 0, &waited).status().ToString(),
            "internal: prefetching sample position 0: opening shard 3: unexpected exception: boom");
}

// Beyond a full window (no cache limit) a throw is left for the scan to meet
// at its position, like any open error there.
TEST(ShardPrefetcher, AThrowBeyondTheWindowComesAtItsPosition) {
  std::atomic<int> throws{0};
  ShardPrefetcher prefetcher(
      {0, 0, 1, 1}, 1,
      [&](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
        if (shard == 1) {
          ++throws;
          throw std::bad_alloc();
        }
        return OpenedShard::Skipped();
      },
      nullptr, {}, /*keep_reused=*/true);
  uint64_t waited = 0;
  for (size_t p = 0; p < 2; ++p) ASSERT_TRUE(prefetcher.Acquire(p, p, &waited).ok()) << p;
  EXPECT_EQ(prefetcher.Acquire(2, 2, &waited).status().message(),
            "prefetching sample position 2: opening shard 1: out of memory (std::bad_alloc)");
  EXPECT_GE(throws.load(), 1);
}

// Planning the next order may throw too: then nothing is prefetched for it.
TEST(ShardPrefetcher, ANextOrderThatThrowsPrefetchesNothing) {
  CountingOpener opener;
  std::atomic<bool> asked{false};
  ShardPrefetcher::ShardMap next;
  {
    ShardPrefetcher prefetcher({0, 0}, 4, opener.Get(), [&]() -> Result<std::vector<size_t>> {
      asked = true;
      throw std::bad_alloc();
    });
    uint64_t waited = 0;
    for (size_t p = 0; p < 2; ++p) ASSERT_TRUE(prefetcher.Acquire(p, p, &waited).ok()) << p;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!asked && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    next = prefetcher.StopAndTakeNext();
  }
  EXPECT_TRUE(asked);
  EXPECT_TRUE(next.empty());
  EXPECT_EQ(opener.opens, (std::map<size_t, int>{{0, 1}}));
}

// Opens that take a while (a small file's round trip), with the most seen
// in flight at once.
struct SlowOpener {
  std::mutex mu;
  std::map<size_t, int> opens;
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  std::optional<size_t> failing;
  ShardPrefetcher::Opener Get() {
    return [this](size_t shard, const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
      int now = ++in_flight;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --in_flight;
      std::lock_guard<std::mutex> lock(mu);
      ++opens[shard];
      if (failing == shard) return NotFoundError("file " + std::to_string(shard) + " is gone");
      return OpenedShard::Skipped();
    };
  }
};

TEST(ShardPrefetcher, OpenThreadsOpenSeveralShardsOfTheWindowAtOnceEachOnce) {
  SlowOpener opener;
  std::vector<size_t> order;
  for (size_t i = 0; i < 64; ++i) order.push_back((i * 37) % 64);  // a permutation
  {
    ShardPrefetcher prefetcher(order, 16, opener.Get(), nullptr, {}, /*keep_reused=*/false,
                               /*open_threads=*/4);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      auto got = prefetcher.Acquire(p, p, &waited);
      ASSERT_TRUE(got.ok()) << p << ": " << got.status().ToString();
      EXPECT_TRUE(prefetcher.At(p)->skipped());
    }
  }
  EXPECT_EQ(opener.opens.size(), 64u);
  for (const auto& [shard, count] : opener.opens) EXPECT_EQ(count, 1) << "shard " << shard;
  EXPECT_GT(opener.most.load(), 1);
  EXPECT_LE(opener.most.load(), 4);
}

// Large shards read in order (a window inside one shard): several download
// at once, each once, and a helper's open beyond the window is what the
// scan takes, not a second open.
TEST(ShardPrefetcher, OpenThreadsOpenShardsReadInOrderSeveralAtOnceEachOnce) {
  SlowOpener opener;
  std::vector<size_t> order;
  for (size_t shard = 0; shard < 16; ++shard) order.insert(order.end(), 50, shard);
  {
    ShardPrefetcher prefetcher(order, 4, opener.Get(), nullptr, {}, /*keep_reused=*/true,
                               /*open_threads=*/4);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      auto got = prefetcher.Acquire(p, p, &waited);
      ASSERT_TRUE(got.ok()) << p << ": " << got.status().ToString();
      EXPECT_EQ(prefetcher.shard_of(p), p / 50);
    }
  }
  EXPECT_EQ(opener.opens.size(), 16u);
  for (const auto& [shard, count] : opener.opens) EXPECT_EQ(count, 1) << "shard " << shard;
  EXPECT_GT(opener.most.load(), 1);
  EXPECT_LE(opener.most.load(), 4);
}

// A helper's failure beyond the window is reported at the shard's first
// position, after every sample before it, and not opened a second time.
TEST(ShardPrefetcher, AFailureBeyondTheWindowIsReportedAtItsPositionOnce) {
  SlowOpener opener;
  opener.failing = 2;
  std::vector<size_t> order;
  for (size_t shard = 0; shard < 4; ++shard) order.insert(order.end(), 10, shard);
  size_t read = 0;
  Status failed = Status::Ok();
  {
    ShardPrefetcher prefetcher(order, 2, opener.Get(), nullptr, {}, /*keep_reused=*/true,
                               /*open_threads=*/4);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      auto got = prefetcher.Acquire(p, p, &waited);
      if (!got.ok()) {
        failed = got.status();
        break;
      }
      ++read;
    }
  }
  EXPECT_EQ(read, 20u);
  EXPECT_EQ(failed.code(), StatusCode::kNotFound);
  EXPECT_EQ(failed.message(), "prefetching sample position 20: file 2 is gone");
  EXPECT_EQ(opener.opens[2], 1);
}

// A shard a helper failed to open is reported at its position, and is not
// opened a second time by the scan.
TEST(ShardPrefetcher, AHelpersFailureIsReportedAtItsPositionOnce) {
  SlowOpener opener;
  opener.failing = 5;
  std::vector<size_t> order{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<size_t> read;
  Status failed = Status::Ok();
  {
    ShardPrefetcher prefetcher(order, 8, opener.Get(), nullptr, {}, false, /*open_threads=*/4);
    uint64_t waited = 0;
    for (size_t p = 0; p < prefetcher.size(); ++p) {
      auto got = prefetcher.Acquire(p, p, &waited);
      if (!got.ok()) {
        failed = got.status();
        break;
      }
      read.push_back(p);
    }
  }
  EXPECT_EQ(read, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(failed.code(), StatusCode::kNotFound);
  EXPECT_EQ(failed.message(), "prefetching sample position 5: file 5 is gone");
  EXPECT_EQ(opener.opens[5], 1);
}

long VoluntarySwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}

// A warm shuffled pass: every shard is open and stays open (reused within a
// window), so the consumer walks the positions itself and has no reason to
// wake the thread or its helpers. Each wake-up is a voluntary context switch
// of the woken thread when it goes back to sleep; they were several per
// batch (a third of a warm pass's CPU).
TEST(ShardPrefetcher, AConsumerOverOpenShardsWakesNoThread) {
  CountingOpener opener;
  std::vector<size_t> order;
  for (size_t i = 0; i < 40000; ++i) order.push_back((i * 7 + i / 3) % 4);
  ShardPrefetcher prefetcher(order, 64, opener.Get(), nullptr, {}, /*keep_reused=*/true,
                             /*open_threads=*/4);
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 63, &waited).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the threads settle
  const long before = VoluntarySwitches();
  for (size_t p = 16; p < order.size(); p += 16) {
    // The consumer's work on a batch: a spin, as a sleep would switch too.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < until) {
    }
    auto got = prefetcher.Acquire(p, p, &waited);
    ASSERT_TRUE(got.ok()) << p << ": " << got.status().ToString();
    ASSERT_GT(*got, p);
  }
  // 2,499 batches (each woke the thread, and it the helpers: 10,285
  // switches before); a few may come from outside the prefetcher.
  EXPECT_LT(VoluntarySwitches() - before, 100);
  EXPECT_EQ(opener.opens, (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

// The order in parts of `part` positions (a pass read in windows), handed
// out by MoreOrder as the prefetcher asks.
struct PartsOfOrder {
  std::vector<size_t> order;
  size_t part = 1;
  std::mutex mu;
  size_t given = 0;
  int calls = 0;
  std::vector<size_t> First() {
    given = std::min(part, order.size());
    return std::vector<size_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(given));
  }
  ShardPrefetcher::MoreOrder More() {
    return [this]() -> Result<ShardPrefetcher::OrderPart> {
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      const size_t to = std::min(given + part, order.size());
      ShardPrefetcher::OrderPart p{std::vector<size_t>(order.begin() + static_cast<std::ptrdiff_t>(given),
                                                       order.begin() + static_cast<std::ptrdiff_t>(to)),
                                   to == order.size()};
      given = to;
      return p;
    };
  }
};

// Every position in turn, as the cursor reads a pass in windows: past the
// known positions it asks for more (Extend).
void DrainInParts(PartsOfOrder& parts, size_t window, bool keep_reused, std::map<size_t, int>* opens) {
  CountingOpener opener;
  {
    ShardPrefetcher prefetcher(parts.First(), window, opener.Get(), nullptr, {}, keep_reused, 1, nullptr,
                               parts.More());
    uint64_t waited = 0;
    for (size_t p = 0; p < parts.order.size(); ++p) {
      if (p == prefetcher.size()) {
        ASSERT_TRUE(prefetcher.Extend().ok()) << p;
      }
      auto got = prefetcher.Acquire(p, p, &waited);
      ASSERT_TRUE(got.ok()) << p << ": " << got.status().message();
      EXPECT_GT(*got, p);
      EXPECT_TRUE(prefetcher.At(p)->skipped());
    }
    EXPECT_EQ(prefetcher.Extend().code(), StatusCode::kOutOfRange);  // no part after the last
  }
  *opens = opener.opens;
}

TEST(ShardPrefetcher, AnOrderInPartsOpensWhatTheWholeOrderOpens) {
  for (bool keep_reused : {false, true}) {
    std::map<size_t, int> whole;
    Drain(keep_reused, &whole);
    for (size_t part : {1, 2, 5}) {
      PartsOfOrder parts;
      parts.order = ReuseJustPastTheScan();
      parts.part = part;
      std::map<size_t, int> opens;
      DrainInParts(parts, 8, keep_reused, &opens);
      EXPECT_EQ(opens, whole) << "keep_reused " << keep_reused << " part " << part;
      // Each part asked for once, by the thread or the consumer.
      EXPECT_EQ(parts.calls, int((ReuseJustPastTheScan().size() + part - 1) / part) - 1);
    }
  }
}

TEST(ShardPrefetcher, AnOrdersFailedPartIsTheConsumersOncePastTheKnownPositions) {
  CountingOpener opener;
  ShardPrefetcher prefetcher({0, 1, 2}, 2, opener.Get(), nullptr, {}, false, 1, nullptr,
                             []() -> Result<ShardPrefetcher::OrderPart> { return IoError("no next window"); });
  uint64_t waited = 0;
  for (size_t p = 0; p < 3; ++p) {
    auto got = prefetcher.Acquire(p, p, &waited);
    ASSERT_TRUE(got.ok()) << p << ": " << got.status().message();
  }
  const Status st = prefetcher.Extend();
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), "no next window");
  EXPECT_EQ(prefetcher.Extend().message(), "no next window");  // kept
}

}  // namespace
}  // namespace sluice

// ShardPrefetcher with open threads: which shards are opening at once, with
// an opener whose every open blocks until the test lets it finish.
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/shard_prefetcher.h"

namespace sluice {
namespace {

struct GatedOpener {
  std::mutex mu;
  std::condition_variable cv;
  std::set<size_t> opening, released;
  std::map<size_t, int> opens;
  size_t most = 0;  // the most opening at once

  ShardPrefetcher::Opener Get() {
    return [this](size_t shard,
                  const std::atomic<bool>* cancel) -> Result<std::shared_ptr<const OpenedShard>> {
      std::unique_lock<std::mutex> lock(mu);
      ++opens[shard];
      opening.insert(shard);
      most = std::max(most, opening.size());
      cv.notify_all();
      while (!released.count(shard) && !cancel->load()) {
        cv.wait_for(lock, std::chrono::milliseconds(1));
      }
      opening.erase(shard);
      cv.notify_all();
      if (!released.count(shard)) return CancelledError("cancelled opening " + std::to_string(shard));
      return OpenedShard::Skipped();
    };
  }
  void Release(size_t shard) {
    std::lock_guard<std::mutex> lock(mu);
    released.insert(shard);
    cv.notify_all();
  }
  // The shards opening once they are `want` (or after 5 s, what they are then).
  std::set<size_t> Opening(const std::set<size_t>& want) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(5), [&] { return opening == want; });
    return opening;
  }
};

// Two open threads (the scan and one helper), one-sample shards, a window
// of the whole order. When the scan's next shard is the one the helper is
// opening, the scan opens the one after it instead of waiting, and the
// free helper takes the next: two opens stay in flight all along, and
// every shard is opened once and read at its positions.
TEST(ShardPrefetcherInFlight, TheScanOpensAnotherShardWhileAHelperOpensItsNext) {
  GatedOpener opener;
  const std::vector<size_t> order{0, 1, 2, 3, 4, 5};
  {
    ShardPrefetcher prefetcher(order, order.size(), opener.Get(), nullptr, {},
                               /*keep_reused=*/false, /*open_threads=*/2);
    uint64_t waited = 0;
    ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited, /*wait=*/false).ok());  // starts the threads
    // The first shard alone, then the scan's next (1) and the helper's (2).
    EXPECT_EQ(opener.Opening({0}), (std::set<size_t>{0}));
    opener.Release(0);
    EXPECT_EQ(opener.Opening({1, 2}), (std::set<size_t>{1, 2}));
    // The scan is done with 1 and its next (2) is the helper's: it opens 3.
    opener.Release(1);
    EXPECT_EQ(opener.Opening({2, 3}), (std::set<size_t>{2, 3}));
    // The helper is done with 2 while the scan opens 3: it takes 4.
    opener.Release(2);
    EXPECT_EQ(opener.Opening({3, 4}), (std::set<size_t>{3, 4}));
    // The scan is back with 2 and 3 open, and 4 is the helper's: it opens 5.
    opener.Release(3);
    EXPECT_EQ(opener.Opening({4, 5}), (std::set<size_t>{4, 5}));
    opener.Release(4);
    opener.Release(5);
    for (size_t p = 0; p < order.size(); ++p) {
      auto ready = prefetcher.Acquire(p, p, &waited);
      ASSERT_TRUE(ready.ok()) << p << ": " << ready.status().ToString();
      EXPECT_GT(*ready, p);
      EXPECT_EQ(prefetcher.shard_of(p), order[p]);
      EXPECT_TRUE(prefetcher.At(p)->skipped()) << p;
    }
  }
  EXPECT_EQ(opener.opens, (std::map<size_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}}));
  EXPECT_EQ(opener.most, 2u);
}

// The scan's next shard is the helper's, so the thread downloads another
// (3) itself. A consumer already waiting for the helper's shard gets it as
// soon as the helper is done, not once the thread's own download ends.
TEST(ShardPrefetcherInFlight, AWaitingConsumerGetsTheHelpersShardWhileTheThreadOpensAnother) {
  GatedOpener opener;
  const std::vector<size_t> order{0, 1, 2, 3, 4, 5};
  ShardPrefetcher prefetcher(order, order.size(), opener.Get(), nullptr, {},
                             /*keep_reused=*/false, /*open_threads=*/2);
  uint64_t waited = 0;
  ASSERT_TRUE(prefetcher.Acquire(0, 0, &waited, /*wait=*/false).ok());  // starts the threads
  opener.Release(0);
  ASSERT_EQ(opener.Opening({1, 2}), (std::set<size_t>{1, 2}));
  opener.Release(1);
  ASSERT_EQ(opener.Opening({2, 3}), (std::set<size_t>{2, 3}));
  // The consumer at position 1 waits for position 2 (the helper's shard).
  auto ready = std::async(std::launch::async, [&] { return prefetcher.Acquire(1, 2, &waited); });
  EXPECT_EQ(ready.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  opener.Release(2);
  const bool returned = ready.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  std::set<size_t> still_opening = opener.Opening({3, 4});
  // Whatever happened, let every open finish so the test ends.
  for (size_t shard : order) opener.Release(shard);
  Result<size_t> end = ready.get();
  EXPECT_TRUE(returned) << "Acquire(1, 2) waited for shard 3, which the thread was opening";
  EXPECT_EQ(still_opening, (std::set<size_t>{3, 4}));
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(*end, 3u);  // 3 is still opening
  EXPECT_EQ(prefetcher.shard_of(2), 2u);
  EXPECT_TRUE(prefetcher.At(2)->skipped());
}

}  // namespace
}  // namespace sluice

#include "base/parallel_claims.h"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

// Every item is handed out exactly once, in claims of the given size
// (the last one short), whatever thread runs it.
TEST(ParallelClaims, EveryItemOnceInClaimsOfTheGivenSize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{100003}}) {
    std::vector<std::atomic<int>> seen(n);
    std::mutex mu;
    std::set<std::pair<size_t, size_t>> claims;
    ParallelClaims(n, 64, 8, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      claims.insert({begin, end});
    });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i << " of " << n;
    ASSERT_EQ(claims.size(), (n + 63) / 64) << n;
    size_t at = 0;
    for (const auto& [begin, end] : claims) {
      EXPECT_EQ(begin, at);
      EXPECT_EQ(end, std::min(n, at + 64));
      at = end;
    }
    EXPECT_EQ(at, n);
  }
}

// Fewer than two claims' worth runs on the caller's thread alone; a claim
// of 0 is taken as 1.
TEST(ParallelClaims, ASmallLoopRunsOnTheCallerAndAZeroClaimIsOne) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran;
  ParallelClaims(127, 64, 8, [&](size_t, size_t) { ran.push_back(std::this_thread::get_id()); });
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0], caller);
  EXPECT_EQ(ran[1], caller);
  std::vector<std::pair<size_t, size_t>> zero;
  ParallelClaims(1, 0, 8, [&](size_t b, size_t e) { zero.push_back({b, e}); });
  EXPECT_EQ(zero, (std::vector<std::pair<size_t, size_t>>{{0, 1}}));
}

// The first exception a claim throws reaches the caller once the threads
// have stopped; on one thread, no claim after it runs.
TEST(ParallelClaims, AThrownClaimIsRethrownOnTheCallerAndStopsTheRest) {
  for (size_t threads : {size_t{1}, size_t{4}}) {
    std::atomic<size_t> ran{0};
    try {
      ParallelClaims(10000, 10, threads, [&](size_t begin, size_t) {
        ran.fetch_add(1);
        if (begin == 500) throw std::runtime_error("claim at 500");
      });
      FAIL() << "no exception on " << threads << " thread(s)";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "claim at 500");
    }
    // On more threads the others may take claims until the flag is up.
    if (threads == 1) {
      EXPECT_EQ(ran.load(), 51u);  // claims 0, 10, ..., 500
    }
  }
}

}  // namespace
}  // namespace sluice

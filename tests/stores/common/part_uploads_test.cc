// ForEachPartConcurrently: the bound on parts in flight, start order, and
// the stop after the first error, on a real event loop with timers standing
// in for part uploads.
#include <algorithm>
#include <chrono>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/common/part_uploads.h"

namespace sluice {
namespace {

namespace asio = boost::asio;
using asio::awaitable;

struct Tracker {
  int in_flight = 0;
  int max_in_flight = 0;
  std::vector<uint64_t> started;
  std::vector<int> finished;  // by part: how many times it completed
};

// A part that takes `ms` milliseconds, or fails at once when it is `failing`.
awaitable<Status> FakePart(Tracker* t, uint64_t part, int ms, uint64_t failing) {
  t->started.push_back(part);
  if (part == failing) co_return IoError("part " + std::to_string(part) + " refused");
  ++t->in_flight;
  t->max_in_flight = std::max(t->max_in_flight, t->in_flight);
  asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await timer.async_wait(asio::use_awaitable);
  --t->in_flight;
  ++t->finished[part];
  co_return Status::Ok();
}

TEST(PartUploadsTest, BoundsPartsInFlightAndRunsEachOnceInOrder) {
  EventLoop loop;
  for (int concurrency : {1, 3, 16}) {
    Tracker t;
    t.finished.assign(10, 0);
    Status st = loop.Run(ForEachPartConcurrently(10, concurrency, [&](uint64_t part) {
      // Uneven durations, so parts finish out of order.
      return FakePart(&t, part, 2 + static_cast<int>((part * 7) % 5), 99);
    }));
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(t.max_in_flight, std::min(concurrency, 10)) << concurrency;
    EXPECT_EQ(t.in_flight, 0);
    EXPECT_EQ(t.finished, std::vector<int>(10, 1)) << concurrency;
    std::vector<uint64_t> in_order(10);
    for (uint64_t i = 0; i < 10; ++i) in_order[i] = i;
    EXPECT_EQ(t.started, in_order) << concurrency;
  }
  Tracker none;
  EXPECT_TRUE(loop.Run(ForEachPartConcurrently(0, 4, [&](uint64_t part) {
    return FakePart(&none, part, 1, 99);
  })).ok());
  EXPECT_TRUE(none.started.empty());
}

TEST(PartUploadsTest, FirstErrorStopsNewPartsAndWaitsForThoseInFlight) {
  EventLoop loop;
  Tracker t;
  t.finished.assign(20, 0);
  Status st = loop.Run(ForEachPartConcurrently(20, 3, [&](uint64_t part) {
    return FakePart(&t, part, 5, 4);
  }));
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_EQ(st.message(), "part 4 refused");
  EXPECT_EQ(t.in_flight, 0);  // everything started has finished
  // Parts 0..4 started; after part 4 failed, at most the two other workers'
  // current parts ran on, and nothing new began.
  EXPECT_GE(t.started.size(), 5u);
  EXPECT_LE(t.started.size(), 6u);
  for (uint64_t p : t.started) EXPECT_LT(p, 6u);
}

}  // namespace
}  // namespace sluice

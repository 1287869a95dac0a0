// TaskGroup: tasks spawned, cancelled and joined together on one executor;
// a cancelled joiner cancels the tasks and still waits for them.
#include "base/asio/task_group.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

namespace sluice {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// Sleeps `ms` (ending early, cancelled, when a cancellation reaches it), then
// appends `name` to *log; after a cancellation, `linger` more before ending
// (as a part that must still close its file), unaffected by it.
asio::awaitable<Status> Sleeper(std::string name, int ms, std::vector<std::string>* log,
                                int linger = 0) {
  asio::steady_timer timer(co_await asio::this_coro::executor, milliseconds(ms));
  auto [ec] = co_await timer.async_wait(kTuple);
  if (ec) {
    if (linger > 0) {
      co_await asio::this_coro::reset_cancellation_state();
      timer.expires_after(milliseconds(linger));
      co_await timer.async_wait(kTuple);
    }
    log->push_back(name + " cancelled");
    co_return CancelledError(name);
  }
  log->push_back(name);
  co_return Status::Ok();
}

struct Ended {
  size_t task;
  bool thrown;
  StatusCode code;
  bool operator==(const Ended&) const = default;
};

TEST(TaskGroup, JoinReturnsOnceEveryTaskHasEnded) {
  asio::io_context ctx;
  std::vector<std::string> log;
  std::vector<Ended> ended;
  bool joined = false;
  asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
    TaskGroup group(co_await asio::this_coro::executor);
    auto on_done = [&](size_t task, std::exception_ptr thrown, Status s) {
      ended.push_back({task, thrown != nullptr, s.code()});
    };
    EXPECT_EQ(group.Spawn(Sleeper("slow", 60, &log), on_done), 0u);
    EXPECT_EQ(group.Spawn(Sleeper("fast", 5, &log), on_done), 1u);
    EXPECT_EQ(group.Spawn(Sleeper("mid", 30, &log), on_done), 2u);
    EXPECT_EQ(group.running(), 3u);
    co_await group.Join();
    EXPECT_EQ(group.running(), 0u);
    EXPECT_EQ(group.spawned(), 3u);
    EXPECT_FALSE(group.join_cancelled());
    joined = true;
  }, asio::detached);
  ctx.run();
  EXPECT_TRUE(joined);
  EXPECT_EQ(log, (std::vector<std::string>{"fast", "mid", "slow"}));
  EXPECT_EQ(ended, (std::vector<Ended>{{1, false, StatusCode::kOk},
                                       {2, false, StatusCode::kOk},
                                       {0, false, StatusCode::kOk}}));
}

TEST(TaskGroup, CancelAllExceptLeavesThatOneRunning) {
  asio::io_context ctx;
  std::vector<std::string> log;
  std::vector<Ended> ended;
  asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
    TaskGroup group(co_await asio::this_coro::executor);
    auto on_done = [&](size_t task, std::exception_ptr thrown, Status s) {
      ended.push_back({task, thrown != nullptr, s.code()});
      // The first failure cancels the others, as GetToFile's parts do.
      if (!s.ok()) return;
      if (task == 0) group.CancelAllExcept(2);
    };
    group.Spawn(Sleeper("first", 5, &log), on_done);
    group.Spawn(Sleeper("hour", 3600 * 1000, &log), on_done);
    group.Spawn(Sleeper("kept", 40, &log), on_done);
    co_await group.Join();
  }, asio::detached);
  const auto start = std::chrono::steady_clock::now();
  ctx.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(log, (std::vector<std::string>{"first", "hour cancelled", "kept"}));
  EXPECT_EQ(ended, (std::vector<Ended>{{0, false, StatusCode::kOk},
                                       {1, false, StatusCode::kCancelled},
                                       {2, false, StatusCode::kOk}}));
}

// Cancelling the joiner cancels every task, and the join still waits for
// each to end (their lingering included): nothing outlives the frame.
TEST(TaskGroup, ACancelledJoinerCancelsTheTasksAndWaitsForThem) {
  asio::io_context ctx;
  std::vector<std::string> log;
  asio::cancellation_signal stop;
  bool joined = false;
  asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
    TaskGroup group(co_await asio::this_coro::executor);
    group.Spawn(Sleeper("a", 3600 * 1000, &log, /*linger=*/30));
    group.Spawn(Sleeper("b", 3600 * 1000, &log));
    co_await group.Join();
    EXPECT_TRUE(group.join_cancelled());
    log.push_back("joined");
    joined = true;
  }, asio::bind_cancellation_slot(stop.slot(), asio::detached));
  asio::steady_timer later(ctx, milliseconds(10));
  later.async_wait([&](boost::system::error_code) { stop.emit(asio::cancellation_type::terminal); });
  const auto start = std::chrono::steady_clock::now();
  ctx.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(joined);
  EXPECT_EQ(log, (std::vector<std::string>{"b cancelled", "a cancelled", "joined"}));
}

TEST(TaskGroup, AnEscapedExceptionReachesOnDone) {
  asio::io_context ctx;
  std::vector<Ended> ended;
  std::string what;
  asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
    TaskGroup group(co_await asio::this_coro::executor);
    group.Spawn([]() -> asio::awaitable<Status> {
      throw std::runtime_error("boom");
      co_return Status::Ok();
    }(), [&](size_t task, std::exception_ptr thrown, Status s) {
      ended.push_back({task, thrown != nullptr, s.code()});
      try {
        std::rethrow_exception(thrown);
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
    });
    co_await group.Join();
  }, asio::detached);
  ctx.run();
  EXPECT_EQ(ended, (std::vector<Ended>{{0, true, StatusCode::kOk}}));
  EXPECT_EQ(what, "boom");
}

// Wake() is news for the joiner: Wait() returns while tasks still run, and a
// wake given while nobody waits is not lost.
TEST(TaskGroup, WaitReturnsOnWakeAsOnATasksEnd) {
  asio::io_context ctx;
  std::vector<std::string> log;
  asio::co_spawn(ctx, [&]() -> asio::awaitable<void> {
    TaskGroup group(co_await asio::this_coro::executor);
    group.Spawn(Sleeper("long", 80, &log));
    asio::steady_timer tick(co_await asio::this_coro::executor, milliseconds(10));
    tick.async_wait([&](boost::system::error_code) {
      log.push_back("wake");
      group.Wake();
    });
    co_await group.Wait();
    log.push_back(group.running() == 1 ? "woken, task running" : "woken, task ended");
    group.Wake();  // before the Wait: it returns at once
    co_await group.Wait();
    log.push_back("woken again");
    co_await group.Wait();  // the task's end
    log.push_back(group.running() == 0 ? "ended" : "still running");
    co_await group.Wait();  // nothing runs: at once
  }, asio::detached);
  ctx.run();
  EXPECT_EQ(log, (std::vector<std::string>{"wake", "woken, task running", "woken again", "long",
                                           "ended"}));
}

}  // namespace
}  // namespace sluice

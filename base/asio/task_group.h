// TaskGroup: coroutines that a coroutine fans out on its executor (a
// download's parts, say) and that end together: spawn, cancel all, join.
//
//   TaskGroup group(executor);
//   group.Spawn(Part(...), [&](size_t task, std::exception_ptr thrown, Status s) { ... });
//   co_await group.Join();  // every task has finished
//
// The joiner's frame may hold what the tasks reference: Join returns only
// once no task runs, and a cancellation of the joining coroutine is passed
// on to every task (terminal) rather than ending the join early. The group
// must outlive its tasks (join before it is destroyed).
//
// Thread safety: none. The group, its tasks, their completion callbacks and
// the joiner all run on one executor's thread (an io_context run by one
// thread, or a strand).
#pragma once

#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/status.h"

namespace sluice {

class TaskGroup {
 public:
  // Called as each task ends, on the executor, before Wait() returns for
  // it: its index (spawn order, from 0) and its Status, or the exception
  // that escaped it (`thrown` non-null; `status` is then OK).
  using OnDone = std::function<void(size_t task, std::exception_ptr thrown, Status status)>;

  explicit TaskGroup(boost::asio::any_io_executor executor)
      : executor_(executor), news_(executor, boost::asio::steady_timer::time_point::max()) {}
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Starts `work` on the executor (it runs once the caller suspends) and
  // returns its index.
  size_t Spawn(boost::asio::awaitable<Status> work, OnDone on_done = nullptr) {
    const size_t task = signals_.size();
    boost::asio::cancellation_signal& signal = signals_.emplace_back();
    ++running_;
    boost::asio::co_spawn(
        executor_, std::move(work),
        boost::asio::bind_cancellation_slot(
            signal.slot(), [this, task, on_done = std::move(on_done)](std::exception_ptr thrown,
                                                                       Status status) {
              if (on_done) on_done(task, thrown, std::move(status));
              --running_;
              Wake();
            }));
    return task;
  }

  // A terminal cancellation to every task spawned so far (finished ones
  // ignore it); tasks spawned later are not cancelled.
  void CancelAll() { CancelAllExcept(signals_.size()); }
  // The same to every task but `task`.
  void CancelAllExcept(size_t task) {
    for (size_t i = 0; i < signals_.size(); ++i) {
      if (i != task) signals_[i].emit(boost::asio::cancellation_type::terminal);
    }
  }

  // News for the joiner: ends the Wait() under way, or the next one at once.
  void Wake() {
    news_pending_ = true;
    news_.cancel();
  }

  size_t spawned() const { return signals_.size(); }
  size_t running() const { return running_; }
  // Whether a Wait() saw its coroutine cancelled (and so cancelled every task).
  bool join_cancelled() const { return join_cancelled_; }

  // Returns once a task has ended or Wake() was called since the last
  // Wait() returned (at once when no task runs). The first time it sees the
  // awaiting coroutine cancelled it cancels every task, and returns.
  // Turns the awaiting coroutine's throw_if_cancelled off and leaves it
  // off: a cancelled coroutine must not unwind (its frame going) while its
  // tasks run. Never throws on cancellation.
  boost::asio::awaitable<void> Wait() {
    namespace this_coro = boost::asio::this_coro;
    co_await this_coro::throw_if_cancelled(false);
    if (!news_pending_ && running_ > 0) {
      co_await news_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    news_pending_ = false;
    boost::asio::cancellation_state state = co_await this_coro::cancellation_state;
    if (!join_cancelled_ && state.cancelled() != boost::asio::cancellation_type::none) {
      join_cancelled_ = true;
      CancelAll();
    }
  }

  // Waits (Wait) until no task runs, then restores the awaiting
  // coroutine's throw_if_cancelled.
  boost::asio::awaitable<void> Join() {
    namespace this_coro = boost::asio::this_coro;
    const bool throw_before = co_await this_coro::throw_if_cancelled();
    while (running_ > 0) co_await Wait();
    co_await this_coro::throw_if_cancelled(throw_before);
  }

 private:
  boost::asio::any_io_executor executor_;
  // One per task, in spawn order; a deque, so that growing it never moves
  // a signal a running task's slot is connected to.
  std::deque<boost::asio::cancellation_signal> signals_;
  size_t running_ = 0;
  boost::asio::steady_timer news_;  // never expires: cancelled by Wake()
  bool news_pending_ = false;
  bool join_cancelled_ = false;
};

}  // namespace sluice

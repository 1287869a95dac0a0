// The event loop: one boost::asio::io_context on io_uring (Asio is built with
// BOOST_ASIO_HAS_IO_URING and without epoll, so sockets, timers and files all
// go through the ring), one thread running it, and a small CPU pool for work
// that must not block the loop (decompression, hashing).
//
// Fork safety: constructing an EventLoop creates nothing. The ring, the loop
// thread and the CPU pool are created on first use (executor(), Spawn(),
// Run(), cpu_pool()), in the process that uses them. ForThisProcess() hands
// out one loop per process and a fresh one in a forked child.
//
// Shutdown() (also run by the destructor) cancels every coroutine started
// with Spawn()/Run() with terminal cancellation, so pending operations
// complete with operation_aborted; then it stops the loop, joins the thread
// and the CPU pool. After Shutdown() new work completes at once with
// kCancelled.
//
// Lifetime: I/O objects made on the loop's executor (sockets, timers, files)
// may outlive Shutdown() but must be destroyed before the EventLoop: the
// context's services are shut down by Shutdown() and freed by the destructor.
//
// Thread safety: every member function is safe to call from any thread,
// except that Run() must not be called from the loop thread (it would wait
// for itself; it returns an error instead) and the destructor must not run
// while other threads still call members.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <type_traits>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include "base/asio/co_status.h"
#include "base/exception_status.h"
#include "base/asio/run_on_pool.h"
#include "base/status.h"

namespace sluice {

struct EventLoopOptions {
  // Threads in the CPU pool (decompression, hashing). 0: half the hardware
  // threads, at least 1.
  unsigned cpu_threads = 0;
  // How long Shutdown() waits for cancelled coroutines to finish before it
  // stops the loop anyway (their frames are then destroyed unresumed).
  std::chrono::milliseconds shutdown_grace{5000};
};

class EventLoop {
 public:
  explicit EventLoop(EventLoopOptions options = {});
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // The loop of this process, created on first call. In a child forked after
  // the parent used its loop, the parent's loop (whose thread does not exist
  // in the child) is abandoned without being touched, and a new one made.
  // Lives until process exit; never destroyed.
  static EventLoop& ForThisProcess();

  // The loop's executor; starts the loop on first use. Valid until
  // Shutdown(); work posted after Shutdown() is destroyed unrun.
  boost::asio::any_io_executor executor();

  // The io_context itself (started as by executor()), for I/O objects that
  // want one, e.g. boost::asio::random_access_file.
  boost::asio::io_context& context();

  // The CPU pool, created on first use. Prefer RunOnCpuPool().
  boost::asio::thread_pool& cpu_pool();

  // True on the loop thread.
  bool InLoopThread() const;

  // Starts `task` on the loop, detached from the caller, cancelled by
  // Shutdown(). `done` runs on the loop thread with the task's result, or
  // with a Status (kCancelled after Shutdown or cancellation, kInternal for an
  // escaped exception) converted to T. T must be Status or Result<U>.
  // `stop`: a stop requested on it (from any thread, before or while the
  // task runs) gives the task the terminal cancellation Shutdown() gives,
  // emitted on the loop thread: its pending operations complete with
  // operation_aborted (the HTTP client then ends its request, kCancelled).
  // The task still runs to its own end; `done` still gets its result.
  // A task whose start is still queued when Shutdown() comes gets
  // kCancelled without running; `done` is skipped only for tasks still
  // unfinished when Shutdown()'s grace ends (their frames are destroyed).
  template <typename T>
  void Spawn(boost::asio::awaitable<T> task,
             std::function<void(T)> done = nullptr, std::stop_token stop = {});

  // Runs `task` on the loop and blocks the calling thread until it finishes.
  // Must not be called on the loop thread (returns kInternal there).
  // T must be Status or Result<U>. `stop`: as Spawn's, so that another
  // thread can end the wait early (the task's result, typically kCancelled).
  template <typename T>
  T Run(boost::asio::awaitable<T> task, std::stop_token stop = {});

  // Cancels all spawned work (again every 100 ms while some remains), waits
  // up to EventLoopOptions::shutdown_grace for it to finish, stops the loop,
  // joins its thread and the CPU pool. Idempotent.
  void Shutdown();

  // Tasks spawned and not yet finished, from the Spawn() call on (a start
  // still queued counts). For tests and diagnostics.
  size_t PendingTasks() const;

  // The first exception a plain handler (not a Spawn()/Run() coroutine,
  // whose exceptions reach their caller) threw on the loop thread, as a
  // Status (StatusFromException); OK if none. The loop keeps running after
  // one: an exception escaping the thread would terminate the host process.
  Status HandlerError() const;

 private:
  struct Task {
    boost::asio::cancellation_signal signal;
    bool finished = false;  // set instead of erasing while cancelling
  };
  using TaskList = std::list<Task>;
  // A task's link to its stop token: the callback posts the task's
  // cancellation to the loop; `finished` (loop thread only) is set before
  // the task is unregistered, so a cancellation posted late does nothing.
  struct StopLink {
    TaskList::iterator task;
    bool finished = false;
    std::optional<std::stop_callback<std::function<void()>>> callback;
  };

  // Starts the loop under mu_ if not yet started; false once shut down.
  bool EnsureStarted();
  bool StartLocked();  // EnsureStarted() with mu_ held
  // Counts a task from Spawn() on, before its start reaches the loop, so
  // that Shutdown() waits for (and cancels) tasks still queued; false (and
  // nothing counted) once shut down.
  bool Admit();
  // Uncounts an admitted task that never registered.
  void Release();
  // The loop thread's body: runs `ctx` until stopped, through exceptions.
  void RunLoop(boost::asio::io_context* ctx);
  // Registers an admitted task on the loop thread; nullopt after Shutdown().
  std::optional<TaskList::iterator> Register();
  void Unregister(TaskList::iterator it);
  // On the loop thread: emits terminal cancellation to one registered task.
  void CancelTask(TaskList::iterator it);
  // On the loop thread, for a task just started: links `stop` to it.
  std::shared_ptr<StopLink> LinkStop(TaskList::iterator it, std::stop_token stop);

  template <typename T>
  static T FromException(std::exception_ptr e);
  template <typename T>
  static boost::asio::awaitable<void> StoreResult(
      boost::asio::awaitable<T> task, std::shared_ptr<std::optional<T>> out) {
    out->emplace(co_await std::move(task));
  }

  const EventLoopOptions options_;
  mutable std::mutex mu_;
  std::condition_variable tasks_cv_;
  bool shut_down_ = false;
  // An io_context whose services can be shut down (destroying suspended
  // coroutine frames) without freeing them, so that I/O objects still held
  // elsewhere can close against them until the EventLoop is destroyed.
  class Context : public boost::asio::io_context {
   public:
    using boost::asio::io_context::io_context;
    void ShutdownServices() { shutdown(); }
  };

  std::unique_ptr<Context> context_;
  std::optional<boost::asio::executor_work_guard<
      boost::asio::io_context::executor_type>> work_;
  Status handler_error_;  // guarded by mu_
  std::thread thread_;
  std::thread::id thread_id_;
  std::unique_ptr<boost::asio::thread_pool> cpu_pool_;
  TaskList tasks_;  // guarded by mu_
  size_t live_tasks_ = 0;  // guarded by mu_
  bool cancelling_ = false;  // guarded by mu_
};

// RunOnCpuPool (base/asio/run_on_pool.h) runs work on cpu_pool().

// ---------------------------------------------------------------------------
// Implementation.

template <typename T>
T EventLoop::FromException(std::exception_ptr e) {
  if (!e) return InternalError("coroutine finished without a result");
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& err) {
    if (err.code() == boost::asio::error::operation_aborted) {
      return CancelledError("operation cancelled");
    }
    return InternalError(std::string("coroutine failed: ") + err.what());
  } catch (const std::bad_alloc&) {
    return StatusFromException(std::current_exception(), "coroutine failed");
  } catch (const std::exception& err) {
    return InternalError(std::string("coroutine failed: ") + err.what());
  } catch (...) {
    return InternalError("coroutine failed with an unknown exception");
  }
}

template <typename T>
void EventLoop::Spawn(boost::asio::awaitable<T> task,
                      std::function<void(T)> done, std::stop_token stop) {
  if (!Admit()) {
    if (done) done(T(CancelledError("event loop is shut down")));
    return;
  }
  auto start = [this, task = std::move(task), done = std::move(done),
                stop = std::move(stop)]() mutable {
    std::optional<TaskList::iterator> it = Register();
    if (!it) {
      Release();
      if (done) done(T(CancelledError("event loop is shut down")));
      return;
    }
    // co_spawn needs a default-constructible result; Status/Result are not,
    // so the task's value travels through `out`.
    auto out = std::make_shared<std::optional<T>>();
    auto link = std::make_shared<std::shared_ptr<StopLink>>();
    boost::asio::co_spawn(
        context_->get_executor(), StoreResult<T>(std::move(task), out),
        boost::asio::bind_cancellation_slot(
            (*it)->signal.slot(),
            [this, it = *it, out, link, done = std::move(done)](std::exception_ptr e) mutable {
              if (*link) {
                (*link)->finished = true;
                (*link)->callback.reset();
              }
              Unregister(it);
              if (!done) return;
              if (e || !out->has_value()) {
                done(FromException<T>(e));
              } else {
                done(std::move(**out));
              }
            }));
    // After co_spawn: a stop already requested cancels the started task.
    if (stop.stop_possible()) *link = LinkStop(*it, std::move(stop));
  };
  try {
    boost::asio::post(context_->get_executor(), std::move(start));
  } catch (...) {
    Release();
    throw;
  }
}

template <typename T>
T EventLoop::Run(boost::asio::awaitable<T> task, std::stop_token stop) {
  if (InLoopThread()) {
    return InternalError("EventLoop::Run called on the loop thread");
  }
  // shared_ptr: if the loop is destroyed unrun, the handler (and with it the
  // promise) is destroyed and the future reports a broken promise.
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  Spawn<T>(
      std::move(task), [promise](T result) { promise->set_value(std::move(result)); },
      std::move(stop));
  try {
    return future.get();
  } catch (const std::future_error&) {
    return T(CancelledError("event loop shut down before the task finished"));
  }
}

}  // namespace sluice

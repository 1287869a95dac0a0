#include "engine/runtime/event_loop.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>
#include <string>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/random_access_file.hpp>
#include <boost/asio/read_at.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::TempDir;

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using namespace std::chrono_literals;

constexpr auto kTuple = asio::as_tuple(use_awaitable);

// Number of io_uring instances this process holds open.
int CountRingFds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    char target[256];
    ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::string(target) == "anon_inode:[io_uring]") ++count;
  }
  closedir(dir);
  return count;
}

std::string PatternBytes(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 24);
  }
  return s;
}

awaitable<Result<std::string>> ReadAt(asio::io_context& ctx, std::string path,
                                      uint64_t offset, size_t n) {
  asio::random_access_file file(ctx, path, asio::file_base::read_only);
  std::string out(n, '\0');
  auto [ec, got] = co_await asio::async_read_at(file, offset, asio::buffer(out), kTuple);
  // io_uring ends a read cancelled in flight with ECANCELED, which is
  // operation_aborted: a cancellation, as the engine's own reads report it.
  if (ec == asio::error::operation_aborted) co_return CancelledError("read " + path);
  if (ec) co_return IoError("read " + path + ": " + ec.message());
  out.resize(got);
  co_return out;
}

TEST(EventLoopTest, ConstructionCreatesNothingFirstUseCreatesARing) {
  int before = CountRingFds();
  {
    EventLoop loop;
    EXPECT_EQ(CountRingFds(), before);  // lazy: no ring yet
    EXPECT_EQ(loop.PendingTasks(), 0u);
    auto tick = []() -> awaitable<Status> {
      asio::steady_timer timer(co_await asio::this_coro::executor, 1ms);
      co_await timer.async_wait(use_awaitable);
      co_return Status::Ok();
    };
    ASSERT_TRUE(loop.Run(tick()).ok());
    // Asio made its ring on the first operation: the loop runs on io_uring.
    EXPECT_EQ(CountRingFds(), before + 1);
  }
  EXPECT_EQ(CountRingFds(), before);    // and closes it on destruction
}

TEST(EventLoopTest, ReadsAFileThroughTheRing) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "data.bin");
  std::string bytes = PatternBytes(1 << 20);
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  EventLoop loop;
  Result<std::string> got = loop.Run(ReadAt(loop.context(), path, 4096, 100000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, bytes.substr(4096, 100000));
  // Past the end: a short read, then eof.
  got = loop.Run(ReadAt(loop.context(), path, (1 << 20) - 10, 100));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("End of file"), std::string::npos)
      << got.status().ToString();
}

TEST(EventLoopTest, ThousandsOfConcurrentTimerAndFileOperationsComplete) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "data.bin");
  std::string bytes = PatternBytes(4 << 20);
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  EventLoop loop;
  constexpr int kTasks = 4000;
  std::atomic<int> ok{0}, bad{0}, done{0};
  for (int i = 0; i < kTasks; ++i) {
    auto task = [](asio::io_context& ctx, std::string path, int i,
                   const std::string& bytes) -> awaitable<Status> {
      asio::steady_timer timer(ctx, std::chrono::microseconds(i % 97 * 10));
      auto [ec] = co_await timer.async_wait(kTuple);
      if (ec) co_return IoError("timer: " + ec.message());
      uint64_t offset = static_cast<uint64_t>(i) * 1000;
      SLUICE_CO_ASSIGN_OR_RETURN(std::string got,
                              co_await ReadAt(ctx, path, offset, 1000));
      if (got != bytes.substr(offset, 1000)) co_return CorruptError("mismatch");
      co_return Status::Ok();
    };
    loop.Spawn<Status>(task(loop.context(), path, i, bytes), [&](Status s) {
      (s.ok() ? ok : bad)++;
      done++;
    });
  }
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (done < kTasks && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(ok.load(), kTasks);
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(loop.PendingTasks(), 0u);
}

// Coroutines blocked on operations that never complete by themselves: a
// one-hour timer and a read from an empty pipe.
awaitable<Status> WaitForever(asio::io_context& ctx, int pipe_fd,
                              std::atomic<int>* aborted) {
  if (pipe_fd < 0) {
    asio::steady_timer timer(ctx, 1h);
    auto [ec] = co_await timer.async_wait(kTuple);
    if (ec == asio::error::operation_aborted) ++*aborted;
    co_return ec ? CancelledError(ec.message())
                 : InternalError("timer fired");
  }
  asio::posix::stream_descriptor pipe(ctx, dup(pipe_fd));
  char c;
  auto [ec, n] = co_await pipe.async_read_some(asio::buffer(&c, 1), kTuple);
  if (ec == asio::error::operation_aborted) ++*aborted;
  co_return ec ? CancelledError(ec.message())
               : InternalError("pipe read " + std::to_string(n));
}

TEST(EventLoopTest, ShutdownCancelsThousandsOfPendingOperationsPromptly) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<int> aborted{0}, cancelled{0}, other{0};
  constexpr int kTasks = 3000;
  auto start = std::chrono::steady_clock::now();
  {
    EventLoop loop;
    for (int i = 0; i < kTasks; ++i) {
      loop.Spawn<Status>(WaitForever(loop.context(), i % 2 ? fds[0] : -1, &aborted),
                         [&](Status s) {
                           (s.code() == StatusCode::kCancelled ? cancelled : other)++;
                         });
    }
    // Starts run in order: once a later task has run, all have started.
    auto marker = []() -> awaitable<Status> { co_return Status::Ok(); };
    ASSERT_TRUE(loop.Run(marker()).ok());
    EXPECT_EQ(loop.PendingTasks(), size_t{kTasks});
    std::this_thread::sleep_for(20ms);  // let them all reach their co_await
    loop.Shutdown();
    EXPECT_EQ(loop.PendingTasks(), 0u);
    // New work after shutdown is refused, not lost.
    Status late = loop.Run(WaitForever(loop.context(), -1, &aborted));
    EXPECT_EQ(late.code(), StatusCode::kCancelled);
    EXPECT_EQ(late.message(), "event loop is shut down");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(aborted.load(), kTasks);
  EXPECT_EQ(cancelled.load(), kTasks);
  EXPECT_EQ(other.load(), 0);
  close(fds[0]);
  close(fds[1]);
}

TEST(EventLoopTest, CancellationSignalCancelsOneOperation) {
  EventLoop loop;
  asio::cancellation_signal signal;
  std::atomic<int> aborted{0};
  std::promise<Status> result;
  asio::post(loop.executor(), [&] {
    asio::co_spawn(loop.context(), WaitForever(loop.context(), -1, &aborted),
                   asio::bind_cancellation_slot(
                       signal.slot(), [&](std::exception_ptr, Status s) {
                         result.set_value(s);
                       }));
  });
  std::this_thread::sleep_for(10ms);
  asio::post(loop.executor(), [&] { signal.emit(asio::cancellation_type::terminal); });
  auto future = result.get_future();
  ASSERT_EQ(future.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(future.get().code(), StatusCode::kCancelled);
  EXPECT_EQ(aborted.load(), 1);
}

// Run's stop token: a stop requested from another thread ends the wait of
// a task blocked on a one-hour timer at once (kCancelled, its operation
// aborted); one requested before Run cancels the task as it starts; a
// stop after the task finished does nothing; the loop runs on.
TEST(EventLoopTest, AStopTokenCancelsOneRunPromptly) {
  EventLoop loop;
  std::atomic<int> aborted{0};
  std::stop_source stop;
  auto start = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
  });
  Status s = loop.Run(WaitForever(loop.context(), -1, &aborted), stop.get_token());
  stopper.join();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(aborted.load(), 1);

  s = loop.Run(WaitForever(loop.context(), -1, &aborted), stop.get_token());
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();

  std::stop_source unused;
  auto quick = [](int v) -> awaitable<Result<int>> { co_return v; };
  Result<int> done = loop.Run(quick(7), unused.get_token());
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, 7);
  unused.request_stop();  // the task is gone: nothing to cancel
  // Other tasks are untouched by a stop that is not theirs.
  std::stop_source other;
  std::promise<Status> waiting;
  loop.Spawn<Status>(WaitForever(loop.context(), -1, &aborted),
                     [&](Status r) { waiting.set_value(r); }, other.get_token());
  Status s2 = loop.Run(WaitForever(loop.context(), -1, &aborted), stop.get_token());
  EXPECT_EQ(s2.code(), StatusCode::kCancelled);
  auto pending = waiting.get_future();
  EXPECT_EQ(pending.wait_for(50ms), std::future_status::timeout);
  other.request_stop();
  ASSERT_EQ(pending.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(pending.get().code(), StatusCode::kCancelled);
  EXPECT_EQ(loop.PendingTasks(), 0u);
  done = loop.Run(quick(8));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, 8);
}

TEST(EventLoopTest, ShutdownWithWorkInFlightDoesNotHangOrLeak) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "data.bin");
  ASSERT_TRUE(WriteFileAtomic(path, PatternBytes(1 << 16)).ok());
  auto start = std::chrono::steady_clock::now();
  std::atomic<int> finished{0};
  std::mutex mu;
  std::map<std::string, int> other_endings;  // for the failure message
  {
    EventLoop loop(EventLoopOptions{.cpu_threads = 2});
    for (int i = 0; i < 500; ++i) {
      auto busy = [](EventLoop& loop, std::string path) -> awaitable<Status> {
        for (;;) {  // until cancelled
          asio::steady_timer timer(loop.context(), 100us);
          co_await timer.async_wait(use_awaitable);
          SLUICE_CO_ASSIGN_OR_RETURN(std::string got,
                                  co_await ReadAt(loop.context(), path, 0, 4096));
          size_t sum = co_await RunOnCpuPool(loop.cpu_pool(), [&got] {
            size_t s = 0;
            for (char c : got) s += static_cast<unsigned char>(c);
            return s;
          });
          if (sum == 0) co_return InternalError("unexpected sum");
        }
      };
      loop.Spawn<Status>(busy(loop, path), [&](Status s) {
        if (s.code() == StatusCode::kCancelled) {
          ++finished;
        } else {
          std::lock_guard<std::mutex> lock(mu);
          ++other_endings[s.ToString()];
        }
      });
    }
    std::this_thread::sleep_for(100ms);
  }  // destructor shuts down with all 500 loops mid-flight
  std::string endings;
  for (const auto& [status, n] : other_endings) endings += status + " x" + std::to_string(n) + "; ";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << endings;
  EXPECT_EQ(finished.load(), 500) << "other endings (the rest never ended): " << endings;
}

// A Spawn() whose start is still queued behind a busy loop when Shutdown()
// comes is counted and ended with kCancelled, not dropped unanswered (its
// `done` never ran when Shutdown() saw no registered task and stopped).
TEST(EventLoopTest, ShutdownAnswersTasksWhoseStartIsStillQueued) {
  std::atomic<int> cancelled{0};
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    EventLoop loop;
    asio::post(loop.context(), [gate] { gate.wait(); });  // the loop is busy
    auto quick = []() -> awaitable<Status> { co_return Status::Ok(); };
    for (int i = 0; i < 10; ++i) {
      loop.Spawn<Status>(quick(), [&](Status s) {
        if (s.code() == StatusCode::kCancelled) ++cancelled;
      });
    }
    EXPECT_EQ(loop.PendingTasks(), 10u);
    std::thread releaser([&] {
      std::this_thread::sleep_for(50ms);
      release.set_value();
    });
    loop.Shutdown();
    releaser.join();
    EXPECT_EQ(loop.PendingTasks(), 0u);
  }
  EXPECT_EQ(cancelled.load(), 10);
}

// A client that holds pooled sockets may be destroyed after Shutdown() but
// before the loop: closing them must find the loop's services still there
// (under ASan this was a use after free when Shutdown() freed the context).
TEST(EventLoopTest, IoObjectsMayOutliveShutdownButNotTheLoop) {
  auto loop = std::make_unique<EventLoop>();
  auto socket = std::make_unique<asio::ip::tcp::socket>(loop->executor());
  socket->open(asio::ip::tcp::v4());
  auto timer = std::make_unique<asio::steady_timer>(loop->executor(), 1h);
  timer->async_wait([](boost::system::error_code) {});
  loop->Shutdown();
  boost::system::error_code ec;
  socket->close(ec);
  EXPECT_FALSE(ec) << ec.message();
  socket.reset();
  timer.reset();
  loop.reset();
}

TEST(EventLoopTest, RunOnCpuPoolRunsOffTheLoopThread) {
  EventLoop loop(EventLoopOptions{.cpu_threads = 1});
  auto task = [](EventLoop& loop) -> awaitable<Result<std::string>> {
    std::thread::id loop_thread = std::this_thread::get_id();
    std::thread::id pool_thread = co_await RunOnCpuPool(
        loop.cpu_pool(), [] { return std::this_thread::get_id(); });
    if (pool_thread == loop_thread) co_return InternalError("ran on the loop");
    if (std::this_thread::get_id() != loop_thread) co_return InternalError("not resumed on the loop");
    co_return std::string("ok");
  };
  Result<std::string> r = loop.Run(task(loop));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "ok");
}

TEST(EventLoopTest, RunOnTheLoopThreadIsAnErrorNotADeadlock) {
  EventLoop loop;
  std::promise<Status> inner;
  asio::post(loop.executor(), [&] {
    auto noop = []() -> awaitable<Status> { co_return Status::Ok(); };
    inner.set_value(loop.Run(noop()));
  });
  Status s = inner.get_future().get();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "EventLoop::Run called on the loop thread");
}

TEST(EventLoopTest, EscapedExceptionsBecomeStatuses) {
  EventLoop loop;
  auto thrower = []() -> awaitable<Status> {
    throw std::runtime_error("boom");
    co_return Status::Ok();
  };
  Status s = loop.Run(thrower());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "coroutine failed: boom");
}

TEST(EventLoopTest, ACoroutineOutOfMemoryIsAnIoErrorNotABug) {
  EventLoop loop;
  auto thrower = []() -> awaitable<Status> {
    throw std::bad_alloc();
    co_return Status::Ok();
  };
  Status s = loop.Run(thrower());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), "coroutine failed: out of memory (std::bad_alloc)");
}

// A plain handler's exception once left the loop thread and terminated the
// process; the loop now keeps running and reports it.
TEST(EventLoopTest, AThrowingHandlerNeitherEndsTheLoopNorTheProcess) {
  EventLoop loop;
  EXPECT_TRUE(loop.HandlerError().ok());
  std::promise<void> thrown;
  asio::post(loop.executor(), [&] {
    thrown.set_value();
    throw std::runtime_error("boom");
  });
  thrown.get_future().get();
  auto answer = []() -> awaitable<Result<int>> { co_return 42; };
  Result<int> r = loop.Run(answer());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(loop.HandlerError().code(), StatusCode::kInternal);
  EXPECT_EQ(loop.HandlerError().message(), "event loop handler: unexpected exception: boom");
}

TEST(EventLoopTest, ForkedChildGetsItsOwnLoop) {
  EventLoop& parent = EventLoop::ForThisProcess();
  auto answer = []() -> awaitable<Result<int>> {
    asio::steady_timer timer(co_await asio::this_coro::executor, 1ms);
    co_await timer.async_wait(use_awaitable);
    co_return 42;
  };
  ASSERT_EQ(*parent.Run(answer()), 42);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    EventLoop& child = EventLoop::ForThisProcess();
    Result<int> r = child.Run(answer());
    _exit(&child != &parent && r.ok() && *r == 42 ? 0 : 1);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  EXPECT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(&EventLoop::ForThisProcess(), &parent);
}

}  // namespace
}  // namespace sluice

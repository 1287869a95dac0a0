#include "engine/runtime/event_loop.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace sluice {

namespace {
// How often Shutdown() repeats its cancellation while tasks remain.
constexpr std::chrono::milliseconds kRecancelInterval{100};
}  // namespace

EventLoop::EventLoop(EventLoopOptions options) : options_(options) {}

EventLoop::~EventLoop() {
  Shutdown();
  // A Shutdown() from the loop thread only stopped the loop; finish here.
  if (thread_.joinable()) thread_.join();
  if (cpu_pool_) cpu_pool_->join();
  cpu_pool_.reset();
  context_.reset();
}

EventLoop& EventLoop::ForThisProcess() {
  // Leaked on purpose: destroying a loop inherited through fork would touch
  // a thread and a ring that belong to the parent.
  static std::mutex mu;
  static EventLoop* loop = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  pid_t pid = getpid();
  if (loop == nullptr || owner != pid) {
    loop = new EventLoop();
    owner = pid;
  }
  return *loop;
}

bool EventLoop::EnsureStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  return StartLocked();
}

bool EventLoop::Admit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!StartLocked()) return false;
  ++live_tasks_;
  return true;
}

void EventLoop::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--live_tasks_ == 0) tasks_cv_.notify_all();
}

bool EventLoop::StartLocked() {
  if (shut_down_) return false;
  if (context_) return true;
  // Concurrency hint 1: only the loop thread runs handlers, so Asio may skip
  // internal locking on the scheduler's hot path.
  context_ = std::make_unique<Context>(1);
  work_.emplace(context_->get_executor());
  thread_ = std::thread([this, ctx = context_.get()] { RunLoop(ctx); });
  thread_id_ = thread_.get_id();
  return true;
}

void EventLoop::RunLoop(boost::asio::io_context* ctx) {
  for (;;) {
    // run() returns normally once stopped; after a handler's exception it
    // may simply be called again (Asio's documented recovery).
    std::exception_ptr e = CatchAll([ctx] { ctx->run(); });
    if (!e) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (handler_error_.ok()) handler_error_ = StatusFromException(e, "event loop handler");
  }
}

Status EventLoop::HandlerError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return handler_error_;
}

boost::asio::any_io_executor EventLoop::executor() {
  return context().get_executor();
}

boost::asio::io_context& EventLoop::context() {
  if (!EnsureStarted()) {
    // After Shutdown() the context still exists (until destruction); work
    // posted to it is destroyed unrun by its destructor.
    std::lock_guard<std::mutex> lock(mu_);
    if (!context_) context_ = std::make_unique<Context>(1);
  }
  return *context_;
}

boost::asio::thread_pool& EventLoop::cpu_pool() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!cpu_pool_) {
    unsigned n = options_.cpu_threads;
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency() / 2);
    cpu_pool_ = std::make_unique<boost::asio::thread_pool>(n);
  }
  return *cpu_pool_;
}

bool EventLoop::InLoopThread() const {
  std::lock_guard<std::mutex> lock(mu_);
  return thread_.joinable() && std::this_thread::get_id() == thread_id_;
}

std::optional<EventLoop::TaskList::iterator> EventLoop::Register() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return std::nullopt;
  tasks_.emplace_front();
  return tasks_.begin();
}

void EventLoop::Unregister(TaskList::iterator it) {
  std::lock_guard<std::mutex> lock(mu_);
  // While Shutdown() walks the list, erasing would invalidate its iterator.
  if (cancelling_) {
    it->finished = true;
  } else {
    tasks_.erase(it);
  }
  if (--live_tasks_ == 0) tasks_cv_.notify_all();
}

void EventLoop::CancelTask(TaskList::iterator it) {
  std::unique_lock<std::mutex> lock(mu_);
  if (it->finished) return;
  // As Shutdown's walk: no erasing while the signal emits (a cancellation
  // handler may finish the task), and mu_ not held while it does.
  cancelling_ = true;
  lock.unlock();
  it->signal.emit(boost::asio::cancellation_type::terminal);
  lock.lock();
  cancelling_ = false;
  tasks_.remove_if([](const Task& task) { return task.finished; });
}

std::shared_ptr<EventLoop::StopLink> EventLoop::LinkStop(TaskList::iterator it,
                                                         std::stop_token stop) {
  auto link = std::make_shared<StopLink>();
  link->task = it;
  std::weak_ptr<StopLink> weak = link;
  auto executor = context_->get_executor();
  // Runs on the thread that requests the stop (or here, if it was
  // requested already): only posts, so that the signal is emitted on the
  // loop thread. request_stop() is noexcept: a post that cannot allocate
  // leaves the task to finish on its own rather than terminate.
  link->callback.emplace(std::move(stop), std::function<void()>([this, weak, executor] {
    try {
      boost::asio::post(executor, [this, weak] {
        std::shared_ptr<StopLink> l = weak.lock();
        if (l && !l->finished) CancelTask(l->task);
      });
    } catch (...) {
    }
  }));
  return link;
}

size_t EventLoop::PendingTasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_tasks_;
}

void EventLoop::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  if (shut_down_) return;
  shut_down_ = true;
  if (thread_.joinable()) {
    if (std::this_thread::get_id() == thread_id_) {
      // Shutdown from a loop handler cannot wait for the loop; stop it and
      // let the destructor (on another thread) join.
      work_.reset();
      context_->stop();
      return;
    }
    // Emit the cancellations on the loop thread (cancellation signals are
    // not thread-safe) and without holding mu_ (a cancellation handler may
    // finish its task, which locks mu_ in Unregister()).
    auto cancel_all = [this] {
      std::unique_lock<std::mutex> inner(mu_);
      cancelling_ = true;
      for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
        if (it->finished) continue;
        inner.unlock();
        it->signal.emit(boost::asio::cancellation_type::terminal);
        inner.lock();
      }
      cancelling_ = false;
      tasks_.remove_if([](const Task& task) { return task.finished; });
    };
    // Emitted again while tasks remain: harmless to a task that took the
    // first emission, and each post wakes the loop. A safeguard against a
    // cancellation or wake-up lost below us: once in CI, 29 of 500 busy
    // tasks outlived the 5 s grace after a single emission. Boost 1.81's
    // io_uring service could apply a cancellation's completion to another
    // operation, a likely cause, since patched (base/asio/meson.build).
    auto deadline = std::chrono::steady_clock::now() + options_.shutdown_grace;
    boost::asio::post(context_->get_executor(), cancel_all);
    while (!tasks_cv_.wait_until(
        lock, std::min(deadline, std::chrono::steady_clock::now() + kRecancelInterval),
        [this] { return live_tasks_ == 0; })) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      boost::asio::post(context_->get_executor(), cancel_all);
    }
    work_.reset();
    context_->stop();
    lock.unlock();
    thread_.join();
    lock.lock();
  }
  std::unique_ptr<boost::asio::thread_pool> pool = std::move(cpu_pool_);
  lock.unlock();
  if (pool) pool->join();
  // Suspended coroutines that did not finish are destroyed now (after the
  // pool, whose jobs may reference their frames), while whatever they
  // reference still exists. The services themselves stay until the
  // destructor: a socket held by a client that outlives Shutdown() closes
  // against them.
  Context* context = nullptr;
  {
    std::lock_guard<std::mutex> inner(mu_);
    context = context_.get();
    tasks_.clear();
  }
  if (context != nullptr) context->ShutdownServices();
}

}  // namespace sluice

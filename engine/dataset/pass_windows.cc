#include "engine/dataset/pass_windows.h"

#include <algorithm>
#include <span>
#include <string>
#include <utility>

#include "base/exception_status.h"
#include "formats/dataset/locate_each.h"

namespace sluice {
namespace {

std::function<Status(size_t)>& PassWindowHook() {
  static std::function<Status(size_t)> hook;
  return hook;
}

}  // namespace

void PassWindows::SetWindowHookForTesting(std::function<Status(size_t window)> hook) {
  PassWindowHook() = std::move(hook);
}

PassWindows::PassWindows(PassWindowSource source, std::shared_ptr<const SampleLocator> locator, size_t depth)
    : source_(std::move(source)), locator_(std::move(locator)), depth_(std::max<size_t>(depth, 1)) {}

PassWindows::~PassWindows() {
  Cancel();
  if (thread_.joinable()) thread_.join();
}

void PassWindows::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
  }
  stop_planning_.store(true);
  stop_planning_.notify_all();
  cv_.notify_all();
}

void PassWindows::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  try {
    thread_ = std::thread([this] { Produce(); });
  } catch (...) {
    error_ = StatusFromException(std::current_exception(), "starting the thread that plans the pass in windows");
  }
}

void PassWindows::Produce() {
  Status st = Status::Ok();
  try {
    st = Plan();
  } catch (...) {
    st = StatusFromException(std::current_exception(), "planning the pass in windows");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!st.ok() && error_.ok()) {
    error_ = st.WithContext("epoch " + std::to_string(source_.request.epoch) + ", worker " +
                            std::to_string(source_.worker) + ", window " + std::to_string(pushed_) + " of " +
                            std::to_string(source_.window_ids) + " ids");
  }
  finished_ = true;
  cv_.notify_all();
}

Status PassWindows::Plan() {
  const size_t window = std::max<size_t>(source_.window_ids, 1);
  PassWindow filling;
  // A full window waits for the next id, so that it knows whether it is
  // the last.
  auto sink = [&](std::span<const int64_t> ids) -> Status {
    try {
      while (!ids.empty()) {
        if (filling.ids.size() == window) {
          SLUICE_RETURN_IF_ERROR(Push(std::exchange(filling, PassWindow{})));
        }
        if (filling.ids.capacity() < window) filling.ids.reserve(window);
        const size_t n = std::min(window - filling.ids.size(), ids.size());
        filling.ids.insert(filling.ids.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
        ids = ids.subspan(n);
      }
      return Status::Ok();
    } catch (...) {
      return StatusFromException(std::current_exception(), "queueing a window of the pass");
    }
  };
  // With skipped steps, the rank's ids dealt to this worker first.
  std::optional<SkipDealer> dealer = source_.skip;
  std::vector<int64_t> dealt;
  auto deal = [&](std::span<const int64_t> ids) -> Status {
    if (!dealer) return sink(ids);
    try {
      dealt.clear();
      dealer->Deal(ids, &dealt);
    } catch (...) {
      return StatusFromException(std::current_exception(), "dealing the rank's ids around skipped steps");
    }
    return sink(dealt);
  };
  if (source_.planned) {
    const std::vector<int64_t>& all = *source_.planned;
    for (size_t at = 0; at < all.size(); at += window) {
      SLUICE_RETURN_IF_ERROR(planner::CheckPlanCancelled(&stop_planning_));
      SLUICE_RETURN_IF_ERROR(deal(std::span<const int64_t>(all).subspan(at, std::min(window, all.size() - at))));
    }
  } else {
    SLUICE_ASSIGN_OR_RETURN(bool windowed,
                            planner::PlanWorkerWindows(source_.request, source_.node, source_.rank_in_node,
                                                       source_.worker, static_cast<int64_t>(window), deal,
                                                       nullptr, &stop_planning_, source_.checkpoints.get()));
    (void)windowed;  // the same ids either way (the planner held them whole if not)
  }
  filling.last = true;
  return Push(std::move(filling));
}

Status PassWindows::Push(PassWindow w) {
  if (const auto& hook = PassWindowHook()) SLUICE_RETURN_IF_ERROR(hook(pushed_));
  // Located once there is room: a window waiting for it holds its ids
  // only (8 bytes an id, not 20). Only this thread adds to the queue, so
  // the room stays.
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return cancelled_ || queue_.size() < depth_; });
    if (cancelled_) return CancelledError("the pass was closed");
  }
  w.shard_of.resize(w.ids.size());
  LocateEach(*locator_, w.ids, w.shard_of.data(), nullptr);
  std::unique_lock<std::mutex> lock(mu_);
  if (cancelled_) return CancelledError("the pass was closed");
  queue_.push_back(std::move(w));
  ++pushed_;
  cv_.notify_all();
  return Status::Ok();
}

Status PassWindows::WaitFront(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return cancelled_ || !queue_.empty() || !error_.ok() || finished_; });
  if (!queue_.empty()) return Status::Ok();
  if (!error_.ok()) return error_;
  if (cancelled_) return CancelledError("the pass was closed");
  return OutOfRangeError("the pass has no window after its last");
}

Result<PassWindow> PassWindows::Take() {
  Start();
  std::unique_lock<std::mutex> lock(mu_);
  SLUICE_RETURN_IF_ERROR(WaitFront(lock));
  PassWindow w = std::move(queue_.front());
  queue_.pop_front();
  cv_.notify_all();
  return w;
}

Result<std::vector<size_t>> PassWindows::PeekShards(size_t count) {
  Start();
  std::unique_lock<std::mutex> lock(mu_);
  Status st = WaitFront(lock);
  if (st.code() == StatusCode::kOutOfRange) return std::vector<size_t>();
  SLUICE_RETURN_IF_ERROR(st);
  const std::vector<size_t>& shards = queue_.front().shard_of;
  return std::vector<size_t>(shards.begin(),
                             shards.begin() + static_cast<std::ptrdiff_t>(std::min(count, shards.size())));
}

}  // namespace sluice

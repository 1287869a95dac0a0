#include "engine/dataset/shard_prefetcher.h"

#include <algorithm>
#include <chrono>

#include "base/exception_status.h"

namespace sluice {

namespace {

PrefetchSchedule::HandleMap Erased(ShardPrefetcher::ShardMap seed) {
  PrefetchSchedule::HandleMap erased;
  for (auto& [shard, opened] : seed) erased.emplace(shard, std::move(opened));
  return erased;
}

}  // namespace

ShardPrefetcher::ShardPrefetcher(std::vector<size_t> shard_of, size_t window, Opener opener,
                                 NextOrder next, ShardMap seed, bool keep_reused,
                                 size_t open_threads, TryOpener try_opener, MoreOrder more,
                                 size_t look_ahead, bool hold_first,
                                 std::optional<uint64_t> hold_room,
                                 std::function<uint64_t(size_t)> shard_room,
                                 RangedOpener ranged_opener)
    : opener_(std::move(opener)),
      try_opener_(std::move(try_opener)),
      ranged_opener_(std::move(ranged_opener)),
      next_(std::move(next)),
      more_(std::move(more)),
      schedule_(std::move(shard_of),
                PrefetchSchedule::Options{.window = window,
                                          .keep_reused = keep_reused,
                                          .open_threads = open_threads,
                                          .try_open = try_opener_ != nullptr,
                                          .has_next = next_ != nullptr,
                                          .look_ahead = look_ahead,
                                          .hold_first = hold_first,
                                          .hold_room = hold_room,
                                          .shard_room = std::move(shard_room)},
                Erased(std::move(seed)), /*complete=*/more_ == nullptr) {}

ShardPrefetcher::~ShardPrefetcher() { Stop(); }

void ShardPrefetcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cancel_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (std::thread& helper : helpers_) {
    if (helper.joinable()) helper.join();
  }
  helpers_.clear();
}

void ShardPrefetcher::EndHold() {
  std::lock_guard<std::mutex> lock(mu_);
  if (schedule_.EndHold()) cv_.notify_all();
}

size_t ShardPrefetcher::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return schedule_.size();
}

void ShardPrefetcher::ExtendOnce(std::unique_lock<std::mutex>& lock) {
  if (extending_) {
    cv_.wait(lock, [&] { return !extending_ || stop_; });
    return;
  }
  extending_ = true;
  lock.unlock();
  Result<OrderPart> part = [&]() -> Result<OrderPart> {
    try {
      return more_();
    } catch (...) {
      return StatusFromException(std::current_exception(), "planning the order's next part");
    }
  }();
  lock.lock();
  extending_ = false;
  if (part.ok()) {
    try {
      schedule_.Append(std::move(part->shard_of), part->last);
    } catch (...) {
      more_error_ = StatusFromException(std::current_exception(), "adding the order's next part");
    }
  } else {
    more_error_ = part.status();
  }
  cv_.notify_all();
}

Status ShardPrefetcher::Extend() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!more_ || schedule_.complete()) return OutOfRangeError("prefetcher: the order has no part after its last");
  const size_t known = schedule_.size();
  while (more_error_.ok() && schedule_.size() == known && !stop_) ExtendOnce(lock);
  if (!more_error_.ok()) return more_error_;
  if (schedule_.size() == known) return CancelledError("prefetcher: stopped");
  return Status::Ok();
}

const PrefetchSchedule::Part* ShardPrefetcher::FindConsumerPart(size_t q) const {
  std::lock_guard<std::mutex> lock(mu_);
  consumer_part_ = schedule_.PartOf(q);
  return consumer_part_;
}

ShardPrefetcher::ShardMap ShardPrefetcher::StopAndTakeNext() {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(next_ready_);
}

Result<std::shared_ptr<const OpenedShard>> ShardPrefetcher::Open(size_t shard, bool wait,
                                                                 bool this_order) {
  bool ranged = false;
  size_t from = 0;
  if (ranged_opener_ && this_order) {
    std::lock_guard<std::mutex> lock(mu_);
    ranged = schedule_.LetGo(shard);
    from = schedule_.scan();
  }
  try {
    if (ranged) return ranged_opener_(shard, from, &cancel_);
    return wait ? opener_(shard, &cancel_) : try_opener_(shard, &cancel_);
  } catch (...) {
    return StatusFromException(std::current_exception(), "opening shard " + std::to_string(shard));
  }
}

void ShardPrefetcher::OpenAhead(size_t shard, std::unique_lock<std::mutex>& lock) {
  schedule_.BeginOpen(shard);
  const uint64_t moves = schedule_.consumer_moves();  // room freed after this is not missed
  lock.unlock();
  auto opened = Open(shard, /*wait=*/!try_opener_);
  lock.lock();
  schedule_.HelperOpened(shard, moves,
                         opened.ok() ? Result<PrefetchSchedule::Handle>(std::move(*opened))
                                     : Result<PrefetchSchedule::Handle>(opened.status()));
  cv_.notify_all();
}

void ShardPrefetcher::Help() {
  try {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      size_t shard = SIZE_MAX;
      cv_.wait(lock, [&] {
        shard = SIZE_MAX;
        if (stop_ || !error_.ok()) return true;
        if (NeedsMore()) return !extending_;
        shard = schedule_.NextToHelp();
        if (NeedsMore()) {  // its look ahead reached the known end
          shard = SIZE_MAX;
          return !extending_;
        }
        return shard != SIZE_MAX;
      });
      if (stop_ || !error_.ok()) return;
      if (shard == SIZE_MAX) {
        ExtendOnce(lock);
        continue;
      }
      OpenAhead(shard, lock);
    }
  } catch (...) {
    // Opener exceptions are errors already (Open); this is the helper's own
    // failure (memory for its bookkeeping): the consumer meets it like the
    // thread's.
    Status st = StatusFromException(std::current_exception(), "prefetch helper thread");
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = std::move(st);
    cv_.notify_all();
  }
}

void ShardPrefetcher::RunGuarded() {
  try {
    Run();
  } catch (...) {
    // Run's lock is released by now. The consumer meets this error at the
    // first position the thread did not reach (it stopped there).
    Status st = StatusFromException(std::current_exception(), "prefetch thread");
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = std::move(st);
    cv_.notify_all();
  }
}

void ShardPrefetcher::OpenNextOrder(std::unique_lock<std::mutex>& lock) {
  NextOrder next = next_;
  const size_t window = schedule_.window();
  lock.unlock();
  auto order = [&]() -> Result<std::vector<size_t>> {
    try {
      return next();
    } catch (...) {
      return StatusFromException(std::current_exception(), "planning the next order");
    }
  }();
  std::vector<size_t> wanted;
  if (order.ok()) {
    for (size_t q = 0; q < order->size() && q < window; ++q) wanted.push_back((*order)[q]);
  }
  for (size_t shard : wanted) {
    lock.lock();
    bool skip = stop_ || next_ready_.count(shard) > 0;
    bool stopping = stop_;
    auto have = std::static_pointer_cast<const OpenedShard>(schedule_.OpenHandle(shard));
    lock.unlock();
    if (stopping) break;
    if (skip) continue;
    if (!have) {
      auto opened = Open(shard, /*wait=*/true, /*this_order=*/false);
      if (!opened.ok()) break;  // the next epoch will report it
      have = std::move(*opened);
    }
    lock.lock();
    next_ready_[shard] = std::move(have);
    lock.unlock();
  }
}

void ShardPrefetcher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      if (stop_) return true;
      const bool work = schedule_.ScanHasWork();  // may find its look ahead at the known end
      return NeedsMore() ? !extending_ : work;
    });
    if (stop_) return;
    if (NeedsMore()) {
      // A decision would look past the known positions: know more first,
      // so that it is the one the whole order would get.
      ExtendOnce(lock);
      continue;
    }
    if (schedule_.OrderOpened()) {
      // The order is fully opened and the consumer is within a window of its
      // end: open the first shards of the next order, then rest.
      OpenNextOrder(lock);
      return;
    }
    if (schedule_.WindowFull()) {
      // The wait above let us through to look ahead.
      size_t shard = schedule_.TakeBeyondWindow();
      lock.unlock();
      auto opened = Open(shard);
      lock.lock();
      // A failure is left for the scan to meet (and report) at its position.
      if (opened.ok()) schedule_.OpenedEarly(shard, std::move(*opened));
      continue;
    }
    // Walk every position whose shard is already open in one go, and wake
    // the consumer once (not per sample).
    if (schedule_.WalkOpen()) {
      cv_.notify_all();
      continue;
    }
    const size_t p = schedule_.scan();
    const size_t shard = schedule_.shard_of(p);
    schedule_.ForgetSeedsPastFirstWindow();
    if (schedule_.InFlight(shard)) {
      // A helper is opening it: rather than fetch it twice or wait idle
      // (one download fewer in flight), open what a helper would next.
      // Meanwhile the consumer walks what is open itself (Acquire), and a
      // helper that is free opens the scan's next shard.
      if (size_t other = schedule_.NextToHelp(); other != SIZE_MAX) {
        schedule_.ScanOpensAhead(true);
        OpenAhead(other, lock);
        schedule_.ScanOpensAhead(false);
        continue;
      }
      schedule_.WaitingPast(p);
      cv_.wait(lock, [&] {
        return stop_ || schedule_.scan() != p || !schedule_.InFlight(shard) ||
               schedule_.NextToHelp() != SIZE_MAX;
      });
      schedule_.WaitingPast(SIZE_MAX);
      continue;
    }
    Result<std::shared_ptr<const OpenedShard>> opened = std::shared_ptr<const OpenedShard>();
    if (std::optional<Status> failed = schedule_.TakeFailure(shard)) {
      opened = std::move(*failed);
    } else {
      // In flight, so that helpers looking ahead leave it to this thread.
      schedule_.BeginOpen(shard);
      opened = OpenForScan(shard, lock);
      schedule_.EndOpen(shard);
      cv_.notify_all();
    }
    if (!opened.ok() && opened.status().code() == StatusCode::kDeadlineExceeded &&
        p > schedule_.consumer() && !stop_) {
      // Room under cache_limit comes as the consumer, which still has open
      // samples before p, moves on: try again. Once it waits at p, it pins
      // nothing of its own and the wait's expiry is the answer.
      continue;
    }
    if (!opened.ok()) {
      error_ = opened.status().WithContext("prefetching sample position " + std::to_string(p));
      cv_.notify_all();
      return;
    }
    schedule_.OpenedAtScan(std::move(*opened));
    cv_.notify_all();
  }
}

Result<std::shared_ptr<const OpenedShard>> ShardPrefetcher::OpenForScan(
    size_t shard, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  if (!try_opener_) {
    auto opened = Open(shard);
    lock.lock();
    return opened;
  }
  auto opened = Open(shard, /*wait=*/false);
  if (!opened.ok() || *opened) {
    lock.lock();
    return opened;
  }
  // Opening it means waiting for room (its own, or that of another
  // process's fetch of it): first give back what the helpers hold ahead of
  // the scan, and keep them from taking room until this open is done.
  lock.lock();
  schedule_.RoomWanted();
  lock.unlock();
  opened = Open(shard);
  lock.lock();
  schedule_.RoomWaitEnded();
  return opened;
}

Result<size_t> ShardPrefetcher::Acquire(size_t from, size_t need, uint64_t* waited_ns, bool wait,
                                        std::chrono::nanoseconds at_most) {
  std::unique_lock<std::mutex> lock(mu_);
  // An order in parts is known up to `need` first (the consumer may need a
  // position past the window the schedule last asked for).
  while (need >= schedule_.size() && from <= need && more_ && more_error_.ok() && !stop_) {
    ExtendOnce(lock);
  }
  if (need >= schedule_.size() && !more_error_.ok()) return more_error_;
  const size_t n = schedule_.size();
  if (from > need || need >= n) {
    return OutOfRangeError("prefetcher: positions " + std::to_string(from) + ".." +
                           std::to_string(need) + " outside the order of " + std::to_string(n));
  }
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { RunGuarded(); });
    for (size_t i = 1; i < schedule_.open_threads(); ++i) helpers_.emplace_back([this] { Help(); });
  }
  // A move is decided on the order known a window past it.
  while (more_ && more_error_.ok() && !stop_ && !schedule_.KnownTo(from)) ExtendOnce(lock);
  schedule_.MoveConsumer(from, need);
  if (wait) schedule_.ConsumerWaitsAt(need);  // OthersHaveWork below wakes the threads
  consumer_part_ = nullptr;  // passed parts may be gone
  // The thread may be busy opening another shard (beyond the window, or
  // one a helper would while a helper opens the scan's): walk what is open
  // already here rather than wait for it, now and at every wake-up while
  // waiting (a helper's shard lands among the early ones, and only a walk
  // moves the scan). Whether or not `need` is ready already: a walk left to
  // the thread would wake it (and it the helpers) for each quarter window
  // the consumer moves.
  auto walk_open = [&] { return error_.ok() && schedule_.WalkOpen(); };
  walk_open();
  // The thread and helpers look from the scan and the consumer; the
  // consumer wakes them only when their wait would let them through: a
  // wake-up per batch for nothing cost a warm shuffled pass a third of its
  // CPU in futex calls and context switches.
  if (schedule_.OthersHaveWork()) cv_.notify_all();
  if (schedule_.scan() <= need && error_.ok() && wait &&
      need < schedule_.consumer() + schedule_.window()) {
    auto start = std::chrono::steady_clock::now();
    auto ready = [&] {
      if (walk_open() && schedule_.OthersHaveWork()) cv_.notify_all();
      return schedule_.scan() > need || !error_.ok();
    };
    if (at_most.count() > 0) {
      cv_.wait_for(lock, at_most, ready);
    } else {
      cv_.wait(lock, ready);
    }
    const auto end = std::chrono::steady_clock::now();
    *waited_ns += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
    last_wait_ = Wait{start, end, schedule_.scan() > need ? static_cast<const OpenedShard*>(schedule_.At(need)) : nullptr};
  }
  if (schedule_.scan() <= need && !error_.ok()) {
    // Nothing is read past the failed position: end the opens behind it
    // (their temporaries go with them) before the consumer hears of it.
    Status failed = error_;
    lock.unlock();
    Stop();
    return failed;
  }
  open_shards_ = schedule_.open_shards();
  return schedule_.scan();
}

}  // namespace sluice

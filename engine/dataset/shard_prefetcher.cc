#include "engine/dataset/shard_prefetcher.h"

#include <algorithm>
#include <chrono>

#include "base/exception_status.h"

namespace sluice {

ShardPrefetcher::ShardPrefetcher(std::vector<size_t> shard_of, size_t window, Opener opener,
                                 NextOrder next, ShardMap seed, bool keep_reused,
                                 size_t open_threads, TryOpener try_opener)
    : shard_of_(std::move(shard_of)),
      look_ahead_(keep_reused),
      window_(window < 1 ? 1 : window),
      opener_(std::move(opener)),
      // Not zeroed: written by the scan before any read, and untouched pages
      // of a long order cost nothing until the scan reaches them.
      at_(new const OpenedShard*[shard_of_.size()]),
      next_(std::move(next)),
      seed_(std::move(seed)),
      open_threads_(std::max<size_t>(open_threads, 1)),
      try_opener_(std::move(try_opener)) {
  if (keep_reused) {
    const size_t n = shard_of_.size();
    next_use_.assign(n, n);
    // later[shard]: its next position seen from the back (n: none yet). A
    // vector, not a map: shard numbers are dense, and this runs over every
    // position of an epoch before its first sample (on resumption too).
    const size_t shards =
        n == 0 ? 0 : *std::max_element(shard_of_.begin(), shard_of_.end()) + 1;
    std::vector<size_t> later(shards, n);
    for (size_t p = n; p-- > 0;) {
      next_use_[p] = later[shard_of_[p]];
      later[shard_of_[p]] = p;
    }
  }
}

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

ShardPrefetcher::ShardMap ShardPrefetcher::StopAndTakeNext() {
  Stop();
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(next_ready_);
}

void ShardPrefetcher::DropBefore(size_t p) {
  while (!expiry_.empty() && expiry_.front().first < p) {
    auto [last, shard] = expiry_.front();
    expiry_.pop_front();
    auto it = ready_.find(shard);
    if (it == ready_.end() || it->second.last_pos != last) continue;  // stale pair
    // The consumer caught up with the scan and is about to read this shard
    // at p, a use the scan has not recorded yet.
    if (scan_ <= p && p < shard_of_.size() && shard_of_[p] == shard) continue;
    // Reused before the scan can get a window past p: keep it. The scan
    // reaches that use and queues the entry again under its new position.
    if (!next_use_.empty() && next_use_[last] < p + window_) continue;
    ready_.erase(it);
  }
}

size_t ShardPrefetcher::AdvanceAhead() {
  const size_t n = shard_of_.size();
  ahead_ = std::max(ahead_, scan_);
  // A shard this call found open or opening: the rest of its run is passed
  // without looking it up again (in order, runs are a shard long).
  size_t passed = SIZE_MAX;
  while (ahead_ < n) {
    const size_t shard = shard_of_[ahead_];
    if (shard != passed) {
      if (!ready_.count(shard) && !early_.count(shard) && !seed_.count(shard) &&
          !in_flight_.count(shard) && !early_errors_.count(shard)) {
        break;
      }
      passed = shard;
    }
    ++ahead_;
  }
  return ahead_;
}

void ShardPrefetcher::ScanOpen(size_t limit) {
  while (scan_ < limit) {
    const size_t shard = shard_of_[scan_];
    auto it = ready_.find(shard);
    if (it == ready_.end()) {
      ShardMap* opened = seed_.count(shard) ? &seed_ : early_.count(shard) ? &early_ : nullptr;
      if (!opened) break;
      auto node = opened->find(shard);
      it = ready_.emplace(shard, Entry{std::move(node->second), scan_}).first;
      opened->erase(node);
    }
    // The run of positions reading this shard takes one lookup and one
    // expiry pair (its last position's): the pairs of the positions before
    // it would be stale, and in order most positions continue a run.
    size_t run_end = scan_ + 1;
    while (run_end < limit && shard_of_[run_end] == shard) ++run_end;
    const OpenedShard* opened = it->second.shard.get();
    std::fill(at_.get() + scan_, at_.get() + run_end, opened);
    scan_ = run_end;
    it->second.last_pos = scan_ - 1;
    expiry_.emplace_back(scan_ - 1, shard);
  }
}

Result<std::shared_ptr<const OpenedShard>> ShardPrefetcher::Open(size_t shard, bool wait) {
  try {
    return wait ? opener_(shard, &cancel_) : try_opener_(shard, &cancel_);
  } catch (...) {
    return StatusFromException(std::current_exception(), "opening shard " + std::to_string(shard));
  }
}

size_t ShardPrefetcher::NextToHelp() {
  // The first sample's shard has the link to itself: helpers start once the
  // thread has opened it.
  if (scan_ == 0) return SIZE_MAX;
  if (try_opener_ && (room_wanted_ || rest_until_moved_ == consumer_moves_)) return SIZE_MAX;
  const size_t limit = std::min(shard_of_.size(), consumer_ + window_);
  // scan_ itself is the thread's own next open, unless the thread is busy
  // opening a later shard.
  const size_t first = scan_opening_ahead_ ? scan_ : scan_ + 1;
  for (size_t q = first; q < limit; ++q) {
    const size_t shard = shard_of_[q];
    // Within a run of one shard only its first position can answer (the
    // position before `first` excepted, as before).
    if (q > first && shard == shard_of_[q - 1]) continue;
    if (!ready_.count(shard) && !early_.count(shard) && !seed_.count(shard) &&
        !in_flight_.count(shard) && !early_errors_.count(shard)) {
      return shard;
    }
  }
  // Nothing left in the window: open the order's next shards beyond it,
  // as many ahead of the scan (opened or opening) as there are threads.
  if (look_ahead_ && early_.size() + in_flight_.size() < open_threads_ &&
      AdvanceAhead() < shard_of_.size()) {
    return shard_of_[ahead_];
  }
  return SIZE_MAX;
}

void ShardPrefetcher::OpenAhead(size_t shard, std::unique_lock<std::mutex>& lock) {
  in_flight_.insert(shard);
  const uint64_t moves = consumer_moves_;  // room freed after this is not missed
  lock.unlock();
  auto opened = Open(shard, /*wait=*/!try_opener_);
  lock.lock();
  in_flight_.erase(shard);
  if (opened.ok() && !*opened) {
    rest_until_moved_ = moves;  // not now: rest until room may have come
  } else if (opened.ok() && room_wanted_) {
    // The thread waits for room: give this back rather than keep it
    // ahead of the scan (it is left for the scan to open again).
    opened->reset();
  } else if (opened.ok()) {
    early_[shard] = std::move(*opened);
  } else if (opened.status().code() != StatusCode::kDeadlineExceeded &&
             opened.status().code() != StatusCode::kCancelled) {
    early_errors_[shard] = opened.status();
  }
  cv_.notify_all();
}

void ShardPrefetcher::Help() {
  try {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      size_t shard = SIZE_MAX;
      cv_.wait(lock, [&] {
        return stop_ || !error_.ok() || (shard = NextToHelp()) != SIZE_MAX;
      });
      if (stop_ || !error_.ok()) return;
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

bool ShardPrefetcher::RunHasWork() {
  const size_t n = shard_of_.size();
  return scan_ < std::min(n, consumer_ + window_) ||
         (scan_ == n && next_ && consumer_ + window_ >= n) ||
         (look_ahead_ && open_threads_ == 1 && early_.size() < kShardsAhead &&
          AdvanceAhead() < n);
}

bool ShardPrefetcher::OthersHaveWork() {
  return RunHasWork() || (waiting_past_ != SIZE_MAX && scan_ != waiting_past_) ||
         (open_threads_ > 1 && NextToHelp() != SIZE_MAX);
}

void ShardPrefetcher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || RunHasWork(); });
    if (stop_) return;
    if (scan_ == shard_of_.size()) {
      // The order is fully opened and the consumer is within a window of its
      // end: open the first shards of the next order, then rest.
      NextOrder next = next_;
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
        for (size_t q = 0; q < order->size() && q < window_; ++q) wanted.push_back((*order)[q]);
      }
      for (size_t shard : wanted) {
        lock.lock();
        bool skip = stop_ || next_ready_.count(shard) > 0;
        bool stopping = stop_;
        std::shared_ptr<const OpenedShard> have;
        if (auto it = ready_.find(shard); it != ready_.end()) have = it->second.shard;
        lock.unlock();
        if (stopping) break;
        if (skip) continue;
        if (!have) {
          auto opened = Open(shard);
          if (!opened.ok()) break;  // the next epoch will report it
          have = std::move(*opened);
        }
        lock.lock();
        next_ready_[shard] = std::move(have);
        lock.unlock();
      }
      return;
    }
    size_t limit = std::min(shard_of_.size(), consumer_ + window_);
    if (scan_ >= limit) {
      // The window is full (the wait above let us through to look ahead).
      size_t shard = shard_of_[ahead_++];
      lock.unlock();
      auto opened = Open(shard);
      lock.lock();
      // A failure is left for the scan to meet (and report) at its position.
      if (opened.ok()) early_[shard] = std::move(*opened);
      continue;
    }
    // Walk every position whose shard is already open in one go, and wake
    // the consumer once (not per sample).
    const size_t before = scan_;
    ScanOpen(limit);
    if (scan_ != before) {
      cv_.notify_all();
      continue;
    }
    const size_t p = scan_;
    const size_t shard = shard_of_[p];
    if (scan_ >= window_) seed_.clear();  // seeds are for the first window only
    if (in_flight_.count(shard)) {
      // A helper is opening it: rather than fetch it twice or wait idle
      // (one download fewer in flight), open what a helper would next.
      // Meanwhile the consumer walks what is open itself (Acquire), and a
      // helper that is free opens the scan's next shard (scan_opening_ahead_).
      if (size_t other = NextToHelp(); other != SIZE_MAX) {
        scan_opening_ahead_ = true;
        OpenAhead(other, lock);
        scan_opening_ahead_ = false;
        continue;
      }
      waiting_past_ = p;
      cv_.wait(lock, [&] {
        return stop_ || scan_ != p || !in_flight_.count(shard) || NextToHelp() != SIZE_MAX;
      });
      waiting_past_ = SIZE_MAX;
      continue;
    }
    Result<std::shared_ptr<const OpenedShard>> opened = std::shared_ptr<const OpenedShard>();
    if (auto failed = early_errors_.find(shard); failed != early_errors_.end()) {
      opened = std::move(failed->second);
      early_errors_.erase(failed);
    } else {
      // In flight, so that helpers looking ahead leave it to this thread.
      in_flight_.insert(shard);
      opened = OpenForScan(shard, lock);
      in_flight_.erase(shard);
      cv_.notify_all();
    }
    if (!opened.ok() && opened.status().code() == StatusCode::kDeadlineExceeded && p > consumer_ &&
        !stop_) {
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
    at_[p] = opened->get();
    ready_[shard] = Entry{std::move(*opened), p};
    expiry_.emplace_back(p, shard);
    ++scan_;
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
  // process's fetch of it):
  // first give back what the helpers hold ahead of the scan, and keep them
  // from taking room until this open is done.
  lock.lock();
  room_wanted_ = true;
  early_.clear();
  lock.unlock();
  opened = Open(shard);
  lock.lock();
  room_wanted_ = false;
  return opened;
}

Result<size_t> ShardPrefetcher::Acquire(size_t from, size_t need, uint64_t* waited_ns, bool wait) {
  const size_t n = shard_of_.size();
  if (from > need || need >= n) {
    return OutOfRangeError("prefetcher: positions " + std::to_string(from) + ".." +
                           std::to_string(need) + " outside the order of " + std::to_string(n));
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { RunGuarded(); });
    for (size_t i = 1; i < open_threads_; ++i) helpers_.emplace_back([this] { Help(); });
  }
  // Report progress every quarter window (and whenever about to wait), so a
  // fast consumer does not wake the thread for every batch.
  if (from > consumer_ && (from >= consumer_ + std::max<size_t>(1, window_ / 4) || scan_ <= need)) {
    consumer_ = from;
    ++consumer_moves_;
    DropBefore(from);
  }
  // The thread may be busy opening another shard (beyond the window, or
  // one a helper would while a helper opens the scan's): walk what is open
  // already here rather than wait for it, now and at every wake-up while
  // waiting (a helper's shard lands in early_, and only a scan moves scan_).
  // Whether or not `need` is ready already: a scan left to the thread would
  // wake it (and it the helpers) for each quarter window the consumer moves.
  auto walk_open = [&] {
    if (error_.ok()) ScanOpen(std::min(n, consumer_ + window_));
  };
  walk_open();
  // The thread and helpers look from scan_ and consumer_.
  if (OthersHaveWork()) cv_.notify_all();
  if (scan_ <= need && error_.ok() && wait && need < consumer_ + window_) {
    auto start = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] {
      const size_t before = scan_;
      walk_open();
      if (scan_ != before && OthersHaveWork()) cv_.notify_all();
      return scan_ > need || !error_.ok();
    });
    *waited_ns += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
            .count());
  }
  if (scan_ <= need && !error_.ok()) {
    // Nothing is read past the failed position: end the opens behind it
    // (their temporaries go with them) before the consumer hears of it.
    Status failed = error_;
    lock.unlock();
    Stop();
    return failed;
  }
  return scan_;
}

}  // namespace sluice

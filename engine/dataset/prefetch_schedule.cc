#include "engine/dataset/prefetch_schedule.h"

#include <algorithm>

namespace sluice {

PrefetchSchedule::PrefetchSchedule(std::vector<size_t> shard_of, const Options& options,
                                   HandleMap seed)
    : shard_of_(std::move(shard_of)),
      look_ahead_(options.keep_reused),
      window_(std::max<size_t>(options.window, 1)),
      open_threads_(std::max<size_t>(options.open_threads, 1)),
      try_open_(options.try_open),
      has_next_(options.has_next),
      // Not zeroed: written by the scan before any read, and untouched pages
      // of a long order cost nothing until the scan reaches them.
      at_(new const void*[shard_of_.size()]),
      seed_(std::move(seed)) {
  if (look_ahead_) {
    const size_t n = shard_of_.size();
    next_use_.assign(n, n);
    // later[shard]: its next position seen from the back (n: none yet). A
    // vector, not a map: shard numbers are dense, and this runs over every
    // position of an epoch before its first sample (on resumption too).
    const size_t shards = n == 0 ? 0 : *std::max_element(shard_of_.begin(), shard_of_.end()) + 1;
    std::vector<size_t> later(shards, n);
    for (size_t p = n; p-- > 0;) {
      next_use_[p] = later[shard_of_[p]];
      later[shard_of_[p]] = p;
    }
  }
}

size_t PrefetchSchedule::WindowEnd() const {
  return std::min(shard_of_.size(), consumer_ + window_);
}

PrefetchSchedule::Handle PrefetchSchedule::OpenHandle(size_t shard) const {
  auto it = ready_.find(shard);
  return it == ready_.end() ? Handle() : it->second.shard;
}

bool PrefetchSchedule::Known(size_t shard) const {
  return ready_.count(shard) || early_.count(shard) || seed_.count(shard) ||
         in_flight_.count(shard) || early_errors_.count(shard);
}

bool PrefetchSchedule::MoveConsumer(size_t from, size_t need) {
  // A fast consumer reports every quarter window, not every batch: each
  // report may wake the scan's thread.
  if (from > consumer_ && (from >= consumer_ + std::max<size_t>(1, window_ / 4) || scan_ <= need)) {
    consumer_ = from;
    ++consumer_moves_;
    DropBefore(from);
    return true;
  }
  return false;
}

void PrefetchSchedule::DropBefore(size_t p) {
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

size_t PrefetchSchedule::AdvanceAhead() {
  const size_t n = shard_of_.size();
  ahead_ = std::max(ahead_, scan_);
  // A shard this call found known: the rest of its run is passed without
  // looking it up again (in order, runs are a shard long).
  size_t passed = SIZE_MAX;
  while (ahead_ < n) {
    const size_t shard = shard_of_[ahead_];
    if (shard != passed) {
      if (!Known(shard)) break;
      passed = shard;
    }
    ++ahead_;
  }
  return ahead_;
}

bool PrefetchSchedule::ScanOpen(size_t limit) {
  const size_t before = scan_;
  while (scan_ < limit) {
    const size_t shard = shard_of_[scan_];
    auto it = ready_.find(shard);
    if (it == ready_.end()) {
      HandleMap* opened = seed_.count(shard) ? &seed_ : early_.count(shard) ? &early_ : nullptr;
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
    std::fill(at_.get() + scan_, at_.get() + run_end, it->second.shard.get());
    scan_ = run_end;
    it->second.last_pos = scan_ - 1;
    expiry_.emplace_back(scan_ - 1, shard);
  }
  return scan_ != before;
}

bool PrefetchSchedule::ScanHasWork() {
  const size_t n = shard_of_.size();
  return scan_ < WindowEnd() || (scan_ == n && has_next_ && consumer_ + window_ >= n) ||
         (look_ahead_ && open_threads_ == 1 && early_.size() < kShardsAhead &&
          AdvanceAhead() < n);
}

bool PrefetchSchedule::OthersHaveWork() {
  return ScanHasWork() || (waiting_past_ != SIZE_MAX && scan_ != waiting_past_) ||
         (open_threads_ > 1 && NextToHelp() != SIZE_MAX);
}

std::optional<Status> PrefetchSchedule::TakeFailure(size_t shard) {
  auto failed = early_errors_.find(shard);
  if (failed == early_errors_.end()) return std::nullopt;
  Status st = std::move(failed->second);
  early_errors_.erase(failed);
  return st;
}

void PrefetchSchedule::OpenedAtScan(Handle shard) {
  const size_t p = scan_;
  at_[p] = shard.get();
  ready_[shard_of_[p]] = Entry{std::move(shard), p};
  expiry_.emplace_back(p, shard_of_[p]);
  ++scan_;
}

void PrefetchSchedule::RoomWanted() {
  room_wanted_ = true;
  early_.clear();
}

size_t PrefetchSchedule::NextToHelp() {
  if (scan_ == 0) return SIZE_MAX;
  if (try_open_ && (room_wanted_ || rest_until_moved_ == consumer_moves_)) return SIZE_MAX;
  const size_t limit = WindowEnd();
  // scan_ itself is the thread's own next open, unless the thread is busy
  // opening a later shard.
  const size_t first = scan_opening_ahead_ ? scan_ : scan_ + 1;
  for (size_t q = first; q < limit; ++q) {
    const size_t shard = shard_of_[q];
    // Within a run of one shard only its first position can answer (the
    // position before `first` excepted, as before).
    if (q > first && shard == shard_of_[q - 1]) continue;
    if (!Known(shard)) return shard;
  }
  if (look_ahead_ && early_.size() + in_flight_.size() < open_threads_ &&
      AdvanceAhead() < shard_of_.size()) {
    return shard_of_[ahead_];
  }
  return SIZE_MAX;
}

void PrefetchSchedule::HelperOpened(size_t shard, uint64_t moves, Result<Handle> opened) {
  in_flight_.erase(shard);
  if (opened.ok() && !*opened) {
    rest_until_moved_ = moves;  // not now: rest until room may have come
  } else if (opened.ok() && room_wanted_) {
    // The scan waits for room: give this back rather than keep it ahead of
    // the scan (it is left for the scan to open again).
  } else if (opened.ok()) {
    early_[shard] = std::move(*opened);
  } else if (opened.status().code() != StatusCode::kDeadlineExceeded &&
             opened.status().code() != StatusCode::kCancelled) {
    early_errors_[shard] = opened.status();
  }
}

}  // namespace sluice

#include "engine/dataset/prefetch_schedule.h"

#include <algorithm>

namespace sluice {

PrefetchSchedule::PrefetchSchedule(std::vector<size_t> shard_of, const Options& options,
                                   HandleMap seed, bool complete)
    : look_ahead_(options.keep_reused),
      tracks_next_use_(options.keep_reused || options.hold_room.has_value()),
      hold_room_(options.hold_room),
      shard_room_(options.shard_room),
      look_ahead_limit_(options.look_ahead),
      window_(std::clamp<size_t>(options.window, 1, kMaxWindow)),
      open_threads_(std::max<size_t>(options.open_threads, 1)),
      try_open_(options.try_open),
      has_next_(options.has_next),
      seed_(std::move(seed)),
      held_(options.hold_first) {
  if (!shard_of.empty()) held_shard_ = shard_of[0];
  part_size_ = std::max<size_t>(shard_of.size(), 1);
  complete_ = false;
  Append(std::move(shard_of), complete);
}

namespace {

// next_use's distance from `from` to `to` (> from), saturated.
uint32_t NextUse(size_t from, size_t to) {
  return to - from >= PrefetchSchedule::kNoNextUse ? PrefetchSchedule::kNoNextUse : uint32_t(to - from);
}

}  // namespace

void PrefetchSchedule::Append(std::vector<size_t> shard_of, bool last) {
  Part part;
  part.begin = known_;
  const size_t n = shard_of.size();
  // Narrowed (each < kMaxShards), and the wide copy freed before the other
  // arrays are made: the part peaks at its 16 bytes a position, not 24.
  part.shard_of.assign(shard_of.begin(), shard_of.end());
  shard_of = {};
  // Not zeroed: written by the scan before any read, and untouched pages
  // of a long order cost nothing until the scan reaches them.
  part.at.reset(new const void*[std::max<size_t>(n, 1)]);
  if (tracks_next_use_) {
    part.next_use.assign(n, kNoNextUse);
    // last_seen_ is a vector, not a map: shard numbers are dense, and a
    // whole order runs through here before its first sample.
    if (n > 0) {
      const size_t shards = *std::max_element(part.shard_of.begin(), part.shard_of.end()) + 1;
      if (last_seen_.size() < shards) last_seen_.resize(shards, SIZE_MAX);
    }
    const size_t kept_from = parts_.empty() ? 0 : parts_.front().begin;
    for (size_t k = 0; k < n; ++k) {
      size_t& seen = last_seen_[part.shard_of[k]];
      if (seen != SIZE_MAX && seen >= part.begin) {
        part.next_use[seen - part.begin] = NextUse(seen, part.begin + k);
      } else if (seen != SIZE_MAX && seen >= kept_from) {
        Part& earlier = PartAt(seen);
        earlier.next_use[seen - earlier.begin] = NextUse(seen, part.begin + k);
      }
      seen = part.begin + k;
    }
  }
  if (hold_room_ && n > 0) {
    const size_t shards = *std::max_element(part.shard_of.begin(), part.shard_of.end()) + 1;
    if (uses_left_.size() < shards) uses_left_.resize(shards, 0);
    for (const uint32_t shard : part.shard_of) ++uses_left_[shard];
  }
  known_ += n;
  parts_.push_back(std::move(part));
  complete_ = last;
  ahead_wants_more_ = false;
  if (tracks_next_use_ && last) {
    // The whole order known: a shard's last use has none after it (size(),
    // as DropBefore counts it).
    const size_t kept_from = parts_.front().begin;
    for (size_t& seen : last_seen_) {
      if (seen != SIZE_MAX && seen >= kept_from) {
        Part& at = PartAt(seen);
        at.next_use[seen - at.begin] = NextUse(seen, known_);
      }
    }
    last_seen_ = {};
  }
}

size_t PrefetchSchedule::RunEnd(size_t q, size_t limit, size_t shard) const {
  while (q < limit) {
    const Part& part = PartAt(q);
    const uint32_t* s = part.shard_of.data();
    const size_t end = std::min(limit, part.begin + part.shard_of.size());
    size_t k = q - part.begin;
    const size_t k_end = end - part.begin;
    while (k < k_end && s[k] == shard) ++k;
    q = part.begin + k;
    if (q < end) break;
  }
  return q;
}

void PrefetchSchedule::DropPassedParts() {
  // Passed by the scan as well: a consumer served from a download in flight
  // runs ahead of the scan, which still walks the positions it passed.
  const size_t passed = std::min(consumer_, scan_);
  while (parts_.size() > 1 && parts_.front().begin + parts_.front().shard_of.size() <= passed) {
    parts_.pop_front();
  }
}

size_t PrefetchSchedule::WindowEnd() const {
  return std::min(known_, consumer_ + window_);
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
    DropPassedParts();
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
    if (scan_ <= p && p < known_ && ShardAt(p) == shard) continue;
    // Reused before the scan can get a window past p: keep it. The scan
    // reaches that use and queues the entry again under its new position.
    // (An incomplete order is known a window past p: KnownTo.)
    if (tracks_next_use_) {
      const Part& part = PartAt(last);
      const uint32_t next = part.next_use[last - part.begin];
      if (look_ahead_ && next != kNoNextUse && last + next < p + window_) continue;
      // Used again later: held for that use where the room allows.
      if (hold_room_ && next != kNoNextUse && last + next < known_) {
        // One let go is read by ranged reads from then on: its handle
        // (the samples read so far) takes no room from a whole shard.
        if (let_go_.count(shard) == 0 && Hold(shard, last + next)) continue;
        let_go_.insert(shard);
      }
    }
    Unhold(shard);
    ready_.erase(it);
  }
}

double PrefetchSchedule::HoldWorth(size_t shard, size_t use, uint64_t room) const {
  const double left = shard < uses_left_.size() ? uses_left_[shard] : 0;
  const double until = use >= consumer_ ? double(use - consumer_) + 1 : 1;
  return left / (double(std::max<uint64_t>(room, 1)) * until);
}

bool PrefetchSchedule::Hold(size_t shard, size_t use) {
  if (held_for_use_.count(shard) > 0) return true;  // a shard already held keeps its place
  const uint64_t room = shard_room_ ? shard_room_(shard) : 1;
  const uint64_t budget = *hold_room_;
  if (room > budget) return false;
  if (held_room_ + room > budget) {
    // Room enough once the held shards worth less than this one are let
    // go, the least worth first (of equal worth, the one used furthest)?
    // Those worth more stay: letting one go would cost more ranged reads
    // than holding this one saves.
    const double worth = HoldWorth(shard, use, room);
    std::vector<std::pair<double, std::pair<size_t, size_t>>> less;  // (worth, (use, shard))
    for (const auto& [held, h] : held_for_use_) {
      const double w = HoldWorth(held, h.use, h.room);
      if (w < worth) less.push_back({w, {h.use, held}});
    }
    std::sort(less.begin(), less.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    uint64_t kept = held_room_;
    size_t go = 0;
    while (kept + room > budget && go < less.size()) {
      kept -= held_for_use_.at(less[go++].second.second).room;
    }
    if (kept + room > budget) return false;
    for (size_t k = 0; k < go; ++k) {
      const size_t gone = less[k].second.second;
      Unhold(gone);
      let_go_.insert(gone);
      // Passed, its next use not scanned yet: no position ahead of the
      // consumer views it.
      ready_.erase(gone);
    }
  }
  held_for_use_.emplace(shard, HeldShard{use, room});
  held_room_ += room;
  return true;
}

void PrefetchSchedule::Unhold(size_t shard) {
  auto it = held_for_use_.find(shard);
  if (it == held_for_use_.end()) return;
  held_room_ -= it->second.room;
  held_for_use_.erase(it);
}

size_t PrefetchSchedule::AdvanceAhead() {
  ahead_ = std::max(ahead_, scan_);
  // A known shard's run is passed without looking it up again (in order,
  // runs are a shard long), a part at a time over its array; within this
  // call nothing changes what is known, so the last two shards found known
  // are not looked up again (py1e alternates between a few shards in runs
  // of a few positions).
  size_t found[2] = {SIZE_MAX, SIZE_MAX};
  while (ahead_ < known_) {
    const Part& part = PartAt(ahead_);
    const uint32_t* s = part.shard_of.data();
    const size_t k_end = part.shard_of.size();
    size_t k = ahead_ - part.begin;
    while (k < k_end) {
      const size_t shard = s[k];
      if (shard != found[0] && shard != found[1]) {
        if (!Known(shard)) break;
        found[1] = found[0];
        found[0] = shard;
      }
      do {
        ++k;
      } while (k < k_end && s[k] == shard);
    }
    ahead_ = part.begin + k;
    if (k < k_end) break;
  }
  if (ahead_ == known_ && !complete_ && known_ - WindowEnd() < look_ahead_limit_) ahead_wants_more_ = true;
  return ahead_;
}

bool PrefetchSchedule::ScanOpen(size_t limit) {
  const size_t before = scan_;
  bool blocked = false;  // at a shard neither open nor opened
  while (scan_ < limit && !blocked) {
    // A part at a time, over its arrays: the walk is every position's, and
    // runs under py1e are a few positions long.
    Part& part = PartAt(scan_);
    const uint32_t* s = part.shard_of.data();
    const void** at = part.at.get();
    const size_t k_end = std::min(limit, part.begin + part.shard_of.size()) - part.begin;
    size_t k = scan_ - part.begin;
    while (k < k_end) {
      const size_t shard = s[k];
      auto it = ready_.find(shard);
      // A held shard's use is here: it is no longer held for a later one.
      if (it != ready_.end() && !held_for_use_.empty()) Unhold(shard);
      if (it == ready_.end()) {
        HandleMap* opened = seed_.count(shard) ? &seed_ : early_.count(shard) ? &early_ : nullptr;
        if (!opened) {
          blocked = true;
          break;
        }
        auto node = opened->find(shard);
        it = ready_.emplace(shard, Entry{std::move(node->second), part.begin + k}).first;
        opened->erase(node);
      }
      // The run of positions reading this shard takes one lookup and one
      // expiry pair (its last position's; a run across parts, one a part):
      // the pairs of the positions before it would be stale, and in order
      // most positions continue a run.
      const void* handle = it->second.shard.get();
      const size_t run_begin = k;
      do {
        at[k++] = handle;
      } while (k < k_end && s[k] == shard);
      if (hold_room_) uses_left_[shard] -= static_cast<uint32_t>(k - run_begin);
      it->second.last_pos = part.begin + k - 1;
      expiry_.emplace_back(part.begin + k - 1, shard);
    }
    scan_ = part.begin + k;
  }
  DropBehindConsumer();
  return scan_ != before;
}

void PrefetchSchedule::DropBehindConsumer() {
  // The consumer may pass positions before the scan reaches them (samples
  // served from a download in flight): a shard whose run the scan walks
  // there is dropped once walked, not at the consumer's next move, which
  // may never come while it waits; its pin would hold the cache room that
  // the next opens wait for. (Not in OpenedAtScan: the walk of the rest of
  // the shard's run needs it.)
  if (scan_ > 0 && consumer_ > 0) DropBefore(consumer_);
}

bool PrefetchSchedule::ScanHasWork() {
  if (held_) return scan_ == 0 && WindowEnd() > 0;
  const size_t n = known_;
  return scan_ < WindowEnd() || (complete_ && scan_ == n && has_next_ && consumer_ + window_ >= n) ||
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
  const size_t g = ShardAt(p);
  Part& part = PartAt(p);
  part.at[p - part.begin] = shard.get();
  if (hold_room_) --uses_left_[g];
  ready_[g] = Entry{std::move(shard), p};
  expiry_.emplace_back(p, g);
  ++scan_;
}

void PrefetchSchedule::RoomWanted() {
  room_wanted_ = true;
  early_.clear();
}

size_t PrefetchSchedule::NextToHelp() {
  if (scan_ == 0 || held_) return SIZE_MAX;
  if (try_open_ && (room_wanted_ || rest_until_moved_ == consumer_moves_)) return SIZE_MAX;
  const size_t limit = WindowEnd();
  // scan_ itself is the thread's own next open, unless the thread is busy
  // opening a later shard.
  const size_t first = scan_opening_ahead_ ? scan_ : scan_ + 1;
  // Within a run of one shard only its first position can answer (the
  // position before `first` excepted, as before).
  for (size_t q = first; q < limit;) {
    const size_t shard = ShardAt(q);
    if (!Known(shard)) return shard;
    q = RunEnd(q + 1, limit, shard);
  }
  if (look_ahead_ && early_.size() + in_flight_.size() < open_threads_ &&
      AdvanceAhead() < known_) {
    return ShardAt(ahead_);
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

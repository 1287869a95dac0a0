// The decisions of a worker's shard prefetcher (shard_prefetcher.h), as a
// pure object: which position the scan opens next, which shard a helper
// opens, what the consumer may walk without waiting, and which open shards
// may be closed. No threads, no locks, no I/O: ShardPrefetcher holds its
// mutex around every call, opens shards with its opener and reports each
// outcome back here; tests drive it step by step (prefetch_schedule_test).
//
// Vocabulary (positions index the worker's planned order, shard_of[p] is the
// shard read at p):
//  - consumer: the first position the consumer still reads (it reports
//    progress a quarter window at a time, see MoveConsumer);
//  - scan: the next position the scan examines; every position before it
//    has its shard open (At);
//  - window: the scan stays below consumer + window;
//  - a shard is open (ready: the scan met it), opened early (by a helper,
//    or beyond the window), seeded (opened by the previous order's
//    prefetcher for this one), in flight (being opened) or failed (a
//    helper's error, for the scan to report at its position).
//
// An order may come in parts (a pass planned in windows, pass_windows.h,
// or a pass planned whole and handed on in parts, order_parts.h): the
// schedule is made with its first part and `complete` false, and the
// owner appends the next part (Append) whenever WantsMore says a decision
// would look past the known positions; the consumer's moves first need
// the order known a window past them (KnownTo). Every decision is then the
// one the schedule would make with the whole order, so an order in parts
// opens and drops shards exactly as one read whole. Parts the consumer
// has passed are freed, so memory follows the known positions
// ahead of the consumer, not the order's length.
//
// Shards are held as type-erased handles (shared_ptr<const void>): the
// schedule keeps them alive while it may hand them out, and never looks
// inside. Not thread-safe: the caller serialises every call, except that
// a Part's arrays stay where they are until the consumer has passed them
// (PartOf).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sluice {

class PrefetchSchedule {
 public:
  using Handle = std::shared_ptr<const void>;
  using HandleMap = std::unordered_map<size_t, Handle>;

  struct Options {
    size_t window = 1;  // samples; at least 1
    // No cache limit to honour: a passed shard stays open while its next
    // use is within a window, and shards beyond the window are opened
    // ahead (see shard_prefetcher.h).
    bool keep_reused = false;
    size_t open_threads = 1;  // the scan's thread and open_threads - 1 helpers
    // Extra opens must never wait for room (a cache limit): a helper that
    // was told "not now" rests until the consumer moves.
    bool try_open = false;
    // The owner can plan the next order (NextOrder): the scan's thread
    // opens its first shards once this order is all open.
    bool has_next = false;
    // An order in parts: how many positions past the window's end the
    // look beyond the window may ask the order for (SIZE_MAX: no bound).
    // LookAheadReach changes nothing in order; a shuffled order whose
    // shards are all known would otherwise be asked for part after part,
    // up to its end.
    size_t look_ahead = SIZE_MAX;
    // Held until EndHold: the scan opens only position 0's shard, and
    // helpers open nothing, until the consumer has read that shard's first
    // sample (or waits at a position of another shard). The first open
    // and read then have the cores to themselves: a pass's first row (a
    // resumption's: a Parquet group decoded from that row's pages on)
    // instead of sharing them with the next shards' opens (whole decodes).
    // Only where an open decodes (DatasetShards::OpenDecodes): elsewhere
    // the hold would only delay the next shards' downloads.
    bool hold_first = false;
    // Set for a single pass (nothing cached): a shard the consumer passed
    // whose next use in the order is known but beyond the window stays
    // open for that use while the shards so held take at most this room
    // together (DatasetOptions::single_pass_memory), each counted at
    // shard_room. When a shard does not fit, held shards are let go until
    // it fits, the least worth holding first, and only those worth less
    // than it; if they cannot make room, it is let go itself. A shard's
    // worth (HoldWorth) is its uses left in the known order (each a
    // ranged read once it is let go: a let-go shard stays let go) per
    // byte of room and per position until its next use: with equal
    // uses left and rooms, the held shards used after it are let go, the
    // furthest first (Belady's rule, over the worker's known order); a
    // shard with many samples left is kept before one used sooner for a
    // sample or two. A shard let go (LetGo) is opened
    // for its later uses for ranged reads of their samples
    // (ShardPrefetcher's ranged_opener), not received whole again. py1e
    // spreads a shard's samples over a block of the order, so without
    // this a shuffled single pass received each shard several times
    // (issue 41). A use in a part of the order not yet known is not seen.
    std::optional<uint64_t> hold_room = std::nullopt;
    // The room holding `shard` takes (its bytes in memory); null: 1 a
    // shard (hold_room is then a count of shards).
    std::function<uint64_t(size_t shard)> shard_room = nullptr;
  };
  // How far past the window's end the look beyond it reaches in an order
  // whose shards each lie in one run (in order) of at most `largest_shard`
  // positions: the scan's run, one run per shard opened ahead (kShardsAhead,
  // or open_threads if more), and the next shard's first position. 0
  // without keep_reused (no look beyond the window).
  static size_t LookAheadReach(const Options& options, size_t largest_shard) {
    if (!options.keep_reused) return 0;
    const size_t shards = 1 + std::max(kShardsAhead, std::max<size_t>(options.open_threads, 1));
    return largest_shard > (SIZE_MAX - 1) / shards ? SIZE_MAX : shards * largest_shard + 1;
  }

  // `seed`: shards already opened for this order. `shard_of` is the whole
  // order, or with `complete` false its first part: every part but the
  // last must then have the first part's size (a window of the pass, or
  // order_parts.h's part).
  // Shard numbers below kMaxShards (held as 32 bits).
  PrefetchSchedule(std::vector<size_t> shard_of, const Options& options, HandleMap seed,
                   bool complete = true);

  // The positions known so far (the whole order once complete).
  size_t size() const { return known_; }
  bool complete() const { return complete_; }
  size_t window() const { return window_; }
  size_t open_threads() const { return open_threads_; }
  size_t shard_of(size_t q) const { return ShardAt(q); }
  size_t scan() const { return scan_; }
  size_t consumer() const { return consumer_; }
  // Shards held for a use beyond the window (Options::hold_room), and
  // the room they take.
  size_t held_shards() const { return held_for_use_.size(); }
  uint64_t held_room() const { return held_room_; }
  bool Held(size_t shard) const { return held_for_use_.count(shard) > 0; }
  // Whether `shard` was let go before its last use for want of hold_room:
  // its later uses in this order read it by ranged reads.
  bool LetGo(size_t shard) const { return let_go_.count(shard) > 0; }
  // Shards held open for the consumer's position and beyond: open (the scan
  // met them, passed ones included until the consumer's next reported move
  // drops them, and those kept for a near reuse), opened early and seeded.
  size_t open_shards() const { return ready_.size() + early_.size() + seed_.size(); }
  // The shard of position q < scan() (the handle stays in ready until the
  // consumer passes q).
  const void* At(size_t q) const {
    const Part& part = PartAt(q);
    return part.at[q - part.begin];
  }
  // One part of the order: positions [begin, begin + shard_of.size()).
  // 16 bytes a position (the memory check's kPassBytesPerPosition counts
  // them): shard numbers are 32-bit (kMaxShards) and next uses distances.
  struct Part {
    size_t begin = 0;
    std::vector<uint32_t> shard_of;
    // next_use[k]: how far after begin + k the same shard is read next;
    // kNoNextUse while none is known or when it is that far or farther
    // (only with keep_reused or hold_room). The window is at most kMaxWindow and the
    // consumer's move at most a window, so a kept shard's next use is
    // always nearer than kNoNextUse: the decisions are those of exact
    // positions.
    std::vector<uint32_t> next_use;
    std::unique_ptr<const void*[]> at;  // at[k]: the shard of begin + k once scanned
  };
  static constexpr uint32_t kNoNextUse = UINT32_MAX;
  // The largest shard number + 1 an order may hold (the dataset refuses
  // more shards: StreamingDataset's IterBegin), and the largest window (a
  // larger one is taken as this: no memory holds such a window anyway).
  static constexpr size_t kMaxShards = UINT32_MAX;
  static constexpr size_t kMaxWindow = (size_t{1} << 31) - 1;
  // The part holding position q (q not yet passed by a reported consumer
  // move): its arrays do not move, and stay until the consumer passes them,
  // so a consumer may read them between its calls without the caller's lock.
  const Part* PartOf(size_t q) const { return &PartAt(q); }

  // --- The order in parts.
  // Appends the next part of the order (`last`: no part follows).
  void Append(std::vector<size_t> shard_of, bool last);
  // Whether a decision would look past the known positions: the window
  // reaches past them, or the look beyond the window did.
  bool WantsMore() const {
    return !complete_ && (consumer_ + window_ > known_ || ahead_wants_more_);
  }
  // Whether a consumer move to `from` can be decided on the known
  // positions (a passed shard is kept when reused within a window of it).
  bool KnownTo(size_t from) const { return complete_ || known_ >= from + window_; }
  // The open shard `shard`, or null (for the next order's first shards).
  Handle OpenHandle(size_t shard) const;

  // --- The consumer's side.
  // The consumer reads from `from` and needs `need` now: it reports a move
  // when it moved a quarter window or more, or is about to wait (scan <=
  // need); shards only the passed positions used are then dropped. Returns
  // whether it moved.
  bool MoveConsumer(size_t from, size_t need);
  // The consumer is about to wait for position `need`: a shard other than
  // position 0's (that one was skipped, or its run passed) ends the hold
  // (Options::hold_first). Returns whether it ended it.
  bool ConsumerWaitsAt(size_t need) {
    if (!held_ || need >= known_ || ShardAt(need) == held_shard_) return false;
    held_ = false;
    return true;
  }
  // The consumer read the first sample: the hold ends. Returns
  // whether it held (the owner then wakes the threads).
  bool EndHold() { return std::exchange(held_, false); }
  // Moves scan over every position within the window whose shard is open
  // (or opened early or seeded, which become open). Returns whether it moved.
  bool WalkOpen() { return ScanOpen(WindowEnd()); }

  // --- The scan's thread.
  // What its wait waits for: a position in the window to open, the next
  // order to start (the order all open, the consumer within a window of its
  // end), or, with keep_reused and no helpers, a shard beyond the window.
  bool ScanHasWork();
  // Whether the scan's thread or a helper would now find work: the owner
  // wakes them only then.
  bool OthersHaveWork();
  bool OrderOpened() const { return complete_ && scan_ == known_; }
  bool WindowFull() const { return scan_ >= WindowEnd(); }
  // With the window full: the shard beyond it to open now (advances past it).
  size_t TakeBeyondWindow() { return ShardAt(ahead_++); }
  // Seeds serve the first window only; called before each open by the scan.
  void ForgetSeedsPastFirstWindow() {
    if (scan_ >= window_) seed_.clear();
  }
  // A helper's failure to open `shard`, taken for the scan to report.
  std::optional<Status> TakeFailure(size_t shard);
  bool InFlight(size_t shard) const { return in_flight_.count(shard) > 0; }
  void BeginOpen(size_t shard) { in_flight_.insert(shard); }
  void EndOpen(size_t shard) { in_flight_.erase(shard); }
  // The scan opened the shard of position scan(): it becomes open there.
  void OpenedAtScan(Handle shard);
  // Opened beyond the window, or by a helper: kept for the scan.
  void OpenedEarly(size_t shard, Handle handle) { early_[shard] = std::move(handle); }
  // The scan's own open would wait for room: shards opened ahead are given
  // back and helpers take no room until RoomWaitEnded.
  void RoomWanted();
  void RoomWaitEnded() { room_wanted_ = false; }
  // The scan's thread opens a later shard itself while a helper opens the
  // scan's (ScanOpensAhead(true) before, false after).
  void ScanOpensAhead(bool on) { scan_opening_ahead_ = on; }
  // The scan's thread waits for scan to move past `p` (a helper opens its
  // shard); SIZE_MAX when it stops waiting.
  void WaitingPast(size_t p) { waiting_past_ = p; }

  // --- Helpers.
  // The shard a helper should open now, or SIZE_MAX: the first shard of
  // the window after the scan's own position that nobody has opened or is
  // opening; with keep_reused and the window all opened or opening, the
  // order's next shard beyond it while fewer than open_threads shards are
  // opened ahead or opening. None before the first position is open (the
  // first sample has the link to itself), while the scan waits for room,
  // or while a helper rests after "not now".
  size_t NextToHelp();
  // Counts the consumer's moves, for HelperOpened's rest.
  uint64_t consumer_moves() const { return consumer_moves_; }
  // A helper's open of `shard` (begun with BeginOpen when the consumer had
  // moved `moves` times) ended: a handle is kept for the scan; a null one
  // ("not now") rests the helpers until the consumer moves again; a handle
  // got while the scan waits for room is given back; an error is kept for
  // the scan unless it is a wait's end (deadline, cancellation), which the
  // scan tries again.
  void HelperOpened(size_t shard, uint64_t moves, Result<Handle> opened);

 private:
  struct Entry {
    Handle shard;
    size_t last_pos = 0;
  };
  const Part& PartAt(size_t q) const {
    // Every part but the last has part_size_ positions.
    return parts_.size() == 1 ? parts_.front() : parts_[(q - parts_.front().begin) / part_size_];
  }
  Part& PartAt(size_t q) { return const_cast<Part&>(std::as_const(*this).PartAt(q)); }
  size_t ShardAt(size_t q) const {
    const Part& part = PartAt(q);
    return part.shard_of[q - part.begin];
  }
  // The end of the run of `shard` from q (q's shard), at most `limit`.
  size_t RunEnd(size_t q, size_t limit, size_t shard) const;
  // Frees the parts the consumer has passed.
  void DropPassedParts();
  size_t WindowEnd() const;
  bool ScanOpen(size_t limit);
  // Moves ahead_ to the next position (from scan_ on) whose shard is
  // neither open, opened early, seeded, opening nor failed; returns it
  // (size() if none).
  size_t AdvanceAhead();
  // Drops entries whose last seen use is behind position p (unless kept for
  // a near reuse with keep_reused).
  void DropBefore(size_t p);
  // DropBefore(consumer_) after a walk (ScanOpen).
  void DropBehindConsumer();
  bool Known(size_t shard) const;

  std::deque<Part> parts_;  // the known positions the consumer has not passed
  size_t part_size_ = 0;    // the first part's size
  size_t known_ = 0;        // positions known: the last part's end
  bool complete_ = true;
  // AdvanceAhead reached the known end of an incomplete order.
  bool ahead_wants_more_ = false;
  // last_seen_[shard]: its last known position (SIZE_MAX: none), to fill
  // next_use as parts come; only with keep_reused or hold_room.
  std::vector<size_t> last_seen_;
  static constexpr size_t kShardsAhead = 2;
  const bool look_ahead_;
  // next_use is kept (keep_reused or hold_room).
  const bool tracks_next_use_;
  const std::optional<uint64_t> hold_room_;
  const std::function<uint64_t(size_t)> shard_room_;
  // DropBefore's decision for `shard`, passed and next used at `use`
  // beyond the window: whether it is held (Options::hold_room), letting
  // go held shards used after `use` where it needs their room.
  bool Hold(size_t shard, size_t use);
  // What holding `shard` (`room`, next used at `use`) saves: its uses
  // left per byte of room and per position from the consumer to `use`.
  double HoldWorth(size_t shard, size_t use, uint64_t room) const;
  // uses_left_[shard]: its known positions the scan has not walked yet
  // (only with hold_room).
  std::vector<uint32_t> uses_left_;
  // `shard` is no longer held (the scan met its use, or it was let go).
  void Unhold(size_t shard);
  // The shards DropBefore kept for a use beyond the window (hold_room),
  // with that use and their room, until the scan meets that use or they
  // go; the room they take; and those let go with a later use (LetGo), for the order's life.
  struct HeldShard {
    size_t use = 0;
    uint64_t room = 0;
  };
  std::unordered_map<size_t, HeldShard> held_for_use_;
  uint64_t held_room_ = 0;
  std::unordered_set<size_t> let_go_;
  const size_t look_ahead_limit_;
  const size_t window_;
  const size_t open_threads_;
  const bool try_open_;
  const bool has_next_;
  size_t ahead_ = 0;
  size_t consumer_ = 0;
  size_t scan_ = 0;
  std::unordered_map<size_t, Entry> ready_;
  // (last_pos, shard) for every update of an entry's last_pos, in scan
  // order (so smallest first); stale pairs are skipped when popped.
  std::deque<std::pair<size_t, size_t>> expiry_;
  HandleMap seed_;
  HandleMap early_;
  std::unordered_set<size_t> in_flight_;
  std::unordered_map<size_t, Status> early_errors_;
  bool room_wanted_ = false;
  bool scan_opening_ahead_ = false;
  size_t waiting_past_ = SIZE_MAX;
  // Options::hold_first until EndHold (or ConsumerWaitsAt ends it): the
  // scan opens position 0's shard (held_shard_) only meanwhile.
  bool held_ = false;
  size_t held_shard_ = SIZE_MAX;
  uint64_t consumer_moves_ = 0;
  uint64_t rest_until_moved_ = UINT64_MAX;
};

}  // namespace sluice

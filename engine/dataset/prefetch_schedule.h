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
// Shards are held as type-erased handles (shared_ptr<const void>): the
// schedule keeps them alive while it may hand them out, and never looks
// inside. Not thread-safe: the caller serialises every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
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
  };

  // `seed`: shards already opened for this order.
  PrefetchSchedule(std::vector<size_t> shard_of, const Options& options, HandleMap seed);

  size_t size() const { return shard_of_.size(); }
  size_t window() const { return window_; }
  size_t open_threads() const { return open_threads_; }
  size_t shard_of(size_t q) const { return shard_of_[q]; }
  size_t scan() const { return scan_; }
  size_t consumer() const { return consumer_; }
  // Shards held open for the consumer's position and beyond: open (the scan
  // met them, passed ones included until the consumer's next reported move
  // drops them, and those kept for a near reuse), opened early and seeded.
  size_t open_shards() const { return ready_.size() + early_.size() + seed_.size(); }
  // The shard of position q < scan() (the handle stays in ready until the
  // consumer passes q).
  const void* At(size_t q) const { return at_[q]; }
  // The open shard `shard`, or null (for the next order's first shards).
  Handle OpenHandle(size_t shard) const;

  // --- The consumer's side.
  // The consumer reads from `from` and needs `need` now: it reports a move
  // when it moved a quarter window or more, or is about to wait (scan <=
  // need); shards only the passed positions used are then dropped. Returns
  // whether it moved.
  bool MoveConsumer(size_t from, size_t need);
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
  bool OrderOpened() const { return scan_ == shard_of_.size(); }
  bool WindowFull() const { return scan_ >= WindowEnd(); }
  // With the window full: the shard beyond it to open now (advances past it).
  size_t TakeBeyondWindow() { return shard_of_[ahead_++]; }
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
  size_t WindowEnd() const;
  bool ScanOpen(size_t limit);
  // Moves ahead_ to the next position (from scan_ on) whose shard is
  // neither open, opened early, seeded, opening nor failed; returns it
  // (size() if none).
  size_t AdvanceAhead();
  // Drops entries whose last seen use is behind position p (unless kept for
  // a near reuse with keep_reused).
  void DropBefore(size_t p);
  bool Known(size_t shard) const;

  const std::vector<size_t> shard_of_;
  // next_use_[p]: the next position after p reading the same shard, or
  // size() if none; filled only with keep_reused.
  std::vector<size_t> next_use_;
  static constexpr size_t kShardsAhead = 2;
  const bool look_ahead_;
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
  // at_[q]: the shard of position q once q < scan_.
  std::unique_ptr<const void*[]> at_;
  HandleMap seed_;
  HandleMap early_;
  std::unordered_set<size_t> in_flight_;
  std::unordered_map<size_t, Status> early_errors_;
  bool room_wanted_ = false;
  bool scan_opening_ahead_ = false;
  size_t waiting_past_ = SIZE_MAX;
  uint64_t consumer_moves_ = 0;
  uint64_t rest_until_moved_ = UINT64_MAX;
};

}  // namespace sluice

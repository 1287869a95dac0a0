// Opens the shards of one worker's planned order ahead of its consumer:
// the threads, locking and opening around PrefetchSchedule
// (prefetch_schedule.h), which decides what to open and drop.
//
// A background thread walks the order and opens (fetches, pins, maps) each
// shard the first time it appears, staying at most `window` samples ahead of
// the consumer's position; the consumer takes opened shards by position. A
// shard is released once the consumer has passed its last use the thread
// has seen; a later reappearance opens it again (normally a cache hit).
//
// Near the end of the order, the thread may look past it: `next` (when
// given) returns the order of what the consumer most likely reads next (the
// next epoch), and the thread opens the shards of its first `window`
// positions, so the next epoch starts without waiting. StopAndTakeNext hands
// them to the next prefetcher (constructor argument `seed`).
//
// With `keep_reused` (no cache limit to honour), a shard the consumer passed
// stays open while its next use in the order is within a window of the
// consumer: shuffled orders revisit shards often, and closing and reopening
// them (unmapping and faulting in the pages again) cost more than the reads.
// Under a cache limit shards go as soon as passed, so their room frees early.
// Without one (and with one open thread), the thread also opens the next
// kShardsAhead shards beyond the window once the window is full: a window of small samples is a sliver of
// one shard, and an in-order reader would otherwise wait for the whole
// download of every next shard.
//
// With `hold_room` (a single pass: a shard let go is not in any cache),
// a passed shard with a later use beyond the window stays open for it
// while the shards so held fit in hold_room, each counted at `shard_room`
// (the soonest used kept); one let go is opened for its later uses by
// `ranged_opener` (its samples read by ranged reads,
// StreamShards::OpenRangedShard) rather than by `opener`
// (PrefetchSchedule::Options::hold_room). It is told the position its use
// is the first of the shard's from (the scan's), so that it can read the
// samples of the uses that follow ahead of the consumer
// (OpenedShard::FillAhead).
//
// With `open_threads` > 1, that many shards are opened at once: helper
// threads open the shards of later positions in the window (the thread
// keeps the order's next one), so a window of small shards (raw files) has
// many downloads in flight instead of one round trip after another. They
// start once the thread has opened the first position's shard, so the
// first sample does not share the link with the rest of the window. When
// the scan reaches a shard a helper is opening, the thread does not wait
// for it: it opens the next shard a helper would (and a free helper may
// take the scan's next one), so `open_threads` opens stay in flight. With
// `keep_reused` as well, once the window is all opened or opening, the
// helpers (and the thread only as one) look beyond it: the order's next
// shards, until `open_threads` shards are opened ahead of the scan or
// opening, so large shards read in order download several at once. A
// helper's failure is kept for the scan to report at that position (a
// failed shard is not fetched twice); only a wait for room or a
// cancellation is left for the scan to try again.
//
// An order may come in parts (a pass planned in windows): given `more`,
// the order starts as `shard_of` and grows by what `more` returns, called
// (one call at a time) by whichever thread needs positions past the known
// ones: the thread or a helper looking ahead, or the consumer about to
// move (PrefetchSchedule::KnownTo) or needing its next positions (Extend).
// What is opened and dropped is what the whole order would get (see
// prefetch_schedule.h). An error from `more` stops the extension; the
// consumer meets it once it needs a position past the known ones (Extend).
// Stopping waits for a call of `more` under way: its owner ends it first.
// `look_ahead` bounds how far past the window the look beyond it asks for
// parts (PrefetchSchedule::Options::look_ahead).
//
// Under a cache limit the cache budget counts one open shard per reader,
// so extra opens must never wait for room: callers then give `try_opener`,
// which opens a shard only if it can without waiting for room, its own or
// that of another process fetching the shard (a null shard: "not now").
// Helpers use it (and the thread opening for a helper), and after a "not
// now" rest until the consumer moves on (which frees room). The thread
// tries it too before its own open, and when that would wait, it first
// drops the shards helpers opened ahead of the scan and keeps helpers from
// taking room until its open is done: a reader waiting for room then pins
// only the positions between the consumer and the scan, which the consumer
// releases as it moves on, as with one thread.
//
// With `hold_first`, until EndHold the threads open only the first
// position's shard, unless the consumer waits for another (a skipped
// shard's successor): the first open has the cores to itself, then the
// prefetcher goes on at its full concurrency (PrefetchSchedule::Options::
// hold_first).
//
// No exception leaves the thread (one would terminate the host process, a
// Python trainer with it): one the opener throws (std::bad_alloc included)
// becomes that shard's open error, as if the opener had returned it; one
// `next` throws means nothing is prefetched; any other stops the thread, and
// the consumer gets it (base/exception_status.h) at the first position the
// thread did not reach.
//
// The thread starts on the first Acquire (so constructing in a parent
// process and forking is safe only if nothing was acquired before the fork)
// and is joined by the destructor. Acquire and At must be called from one
// thread at a time. Every wait is bounded by the opener's own bounds (the
// shard cache's wait_timeout).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/dataset/opened_shard.h"
#include "engine/dataset/prefetch_schedule.h"

namespace sluice {

class ShardPrefetcher {
 public:
  // `cancel` becomes true when the prefetcher stops: an opener waiting on
  // other processes or for room should then give up (kCancelled).
  using Opener = std::function<Result<std::shared_ptr<const OpenedShard>>(
      size_t shard, const std::atomic<bool>* cancel)>;
  // As Opener, but returns a null shard instead of waiting (see above).
  using TryOpener = Opener;
  using ShardMap = std::unordered_map<size_t, std::shared_ptr<const OpenedShard>>;
  // As Opener, for a shard let go (see hold_room above): its use is the
  // first of `shard` at or after position `from`.
  using RangedOpener = std::function<Result<std::shared_ptr<const OpenedShard>>(
      size_t shard, size_t from, const std::atomic<bool>* cancel)>;
  // The following order's shard per position; called at most once, on the
  // prefetch thread. An error just means nothing is prefetched.
  using NextOrder = std::function<Result<std::vector<size_t>>()>;
  // The order's next part: its shards per position, and whether it is the
  // last. Called with no lock held, one call at a time, on any thread.
  struct OrderPart {
    std::vector<size_t> shard_of;
    bool last = true;
  };
  using MoreOrder = std::function<Result<OrderPart>()>;

  // shard_of[p]: the shard holding the sample at position p of the order.
  // window >= 1 samples. `seed`: shards already opened for this order.
  ShardPrefetcher(std::vector<size_t> shard_of, size_t window, Opener opener,
                  NextOrder next = nullptr, ShardMap seed = {}, bool keep_reused = false,
                  size_t open_threads = 1, TryOpener try_opener = nullptr,
                  MoreOrder more = nullptr, size_t look_ahead = SIZE_MAX,
                  bool hold_first = false, std::optional<uint64_t> hold_room = std::nullopt,
                  std::function<uint64_t(size_t)> shard_room = nullptr,
                  RangedOpener ranged_opener = nullptr);
  ~ShardPrefetcher();
  ShardPrefetcher(const ShardPrefetcher&) = delete;
  ShardPrefetcher& operator=(const ShardPrefetcher&) = delete;

  // The consumer's side, one batch at a time. Marks the positions before
  // `from` consumed (the shards only they used may go) and returns the end
  // of the ready run: every position in [from, end) has its shard open, and
  // At(q) for those stays valid until the next Acquire with a larger `from`.
  // With `wait`, first waits until position `need` (from <= need) is ready,
  // adding the time waited to *waited_ns; a `need` a window or more past
  // `from` cannot be reached before the consumer moves on, and is not waited
  // for. The first error the thread met is returned once the consumer needs
  // the position it failed at, after the threads have stopped (opens under
  // way finish first). `from` must not decrease between calls.
  // `at_most` (when positive) bounds that wait: it may end with `need`
  // not ready.
  Result<size_t> Acquire(size_t from, size_t need, uint64_t* waited_ns, bool wait = true,
                         std::chrono::nanoseconds at_most = std::chrono::nanoseconds(0));

  // The last wait of Acquire since the previous call: its span and the
  // shard it waited for (null when it ended without one: an error), which
  // stays valid as At(need) does. nullopt: Acquire did not wait.
  struct Wait {
    std::chrono::steady_clock::time_point start, end;
    const OpenedShard* shard = nullptr;
  };
  std::optional<Wait> TakeLastWait() { return std::exchange(last_wait_, std::nullopt); }

  // The shard of position q, for q in the range the last Acquire returned
  // (no lock but once a part: the thread never changes a position's shard
  // once ready, and a part stays until the consumer passes it).
  const OpenedShard* At(size_t q) const {
    const PrefetchSchedule::Part& part = ConsumerPart(q);
    return static_cast<const OpenedShard*>(part.at[q - part.begin]);
  }
  size_t shard_of(size_t q) const {
    const PrefetchSchedule::Part& part = ConsumerPart(q);
    return part.shard_of[q - part.begin];
  }
  // The part holding position q, for q in the range the last Acquire
  // returned: At and shard_of for a run of positions without a call a
  // position (the cursor's PositionLookup). It stays until the next Acquire
  // (which may free the parts the consumer passed).
  const PrefetchSchedule::Part& ConsumerPart(size_t q) const {
    const PrefetchSchedule::Part* part = consumer_part_;
    if (part == nullptr || q - part->begin >= part->shard_of.size()) part = FindConsumerPart(q);
    return *part;
  }

  // The positions known so far (the consumer's thread).
  size_t size() const;

  // With `more`: makes the order known past its present end (waiting for a
  // call of `more` under way, else calling it). Its error, kept, is
  // returned by every later call. The consumer's thread.
  Status Extend();

  // The consumer has read the first position's sample: with
  // `hold_first`, the threads open ahead from now on. Once; later calls do
  // nothing.
  void EndHold();

  // PrefetchSchedule::open_shards() as the last Acquire left it (the
  // consumer's thread, as Acquire).
  size_t open_shards() const { return open_shards_; }

  // Stops and joins the thread; returns the shards it opened for the next
  // order (empty if it did not get there).
  ShardMap StopAndTakeNext();

 private:
  void Run();
  void RunGuarded();  // the thread's body: Run, any exception -> error_
  // A helper thread's body: opens the shard schedule_.NextToHelp() names,
  // until stopped. Opener exceptions become errors (Open).
  void Help();
  // A helper's open of `shard`: in flight while opening, then reported to
  // schedule_. Called and returns with `lock` held; releases it while
  // opening.
  void OpenAhead(size_t shard, std::unique_lock<std::mutex>& lock);
  // opener_(shard, &cancel_) (try_opener_ when `wait` is false; for a
  // shard of this order the schedule let go early, ranged_opener_), an
  // exception as its error Status. `this_order` false: a shard of the
  // next order. Called without mu_ held.
  Result<std::shared_ptr<const OpenedShard>> Open(size_t shard, bool wait = true,
                                                  bool this_order = true);
  // The thread's open of the scan's shard (see try_opener above). Called
  // and returns with `lock` held; releases it while opening.
  Result<std::shared_ptr<const OpenedShard>> OpenForScan(size_t shard,
                                                         std::unique_lock<std::mutex>& lock);
  // The first shards of the next order, into next_ready_ (the thread, once
  // this order is all open). Called with `lock` held and returns without it.
  void OpenNextOrder(std::unique_lock<std::mutex>& lock);
  void Stop();
  // One call of more_ (or, when another thread's is under way, a wait for
  // it). Called and returns with `lock` held; releases it meanwhile.
  void ExtendOnce(std::unique_lock<std::mutex>& lock);
  // Whether a decision waits for the order's next part: until it is in,
  // the threads decide nothing (what they would decide could differ from
  // the whole order's), but one of them extends it (ExtendOnce).
  bool NeedsMore() const { return more_ && more_error_.ok() && schedule_.WantsMore(); }
  // ConsumerPart's look-up under the lock, cached (out of line: the
  // cached path is a position's, this one a part's).
  const PrefetchSchedule::Part* FindConsumerPart(size_t q) const;

  const Opener opener_;
  const TryOpener try_opener_;
  const RangedOpener ranged_opener_;  // may be null
  const NextOrder next_;
  const MoreOrder more_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Every decision of what to open and drop; guarded by mu_, except that
  // At() reads positions the consumer was handed (the thread never changes
  // a position's shard once ready).
  PrefetchSchedule schedule_;
  bool started_ = false, stop_ = false;
  std::atomic<bool> cancel_{false};  // stop_, readable without mu_ by the opener
  Status error_ = Status::Ok();
  std::optional<Wait> last_wait_;  // the consumer's own (Acquire, TakeLastWait)
  size_t open_shards_ = 0;         // the consumer's own (Acquire, open_shards)
  ShardMap next_ready_;
  bool extending_ = false;              // a call of more_ is under way
  Status more_error_ = Status::Ok();    // more_'s error, kept
  // The consumer's cached part (ConsumerPart); reset by Acquire, which
  // may free passed parts.
  mutable const PrefetchSchedule::Part* consumer_part_ = nullptr;
  std::thread thread_;
  std::vector<std::thread> helpers_;
};

}  // namespace sluice

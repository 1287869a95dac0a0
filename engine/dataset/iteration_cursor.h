// One pass of one worker over its planned order: the sample ids, where the
// consumer is, and the ShardPrefetcher opening their shards ahead of it.
//
// The prefetch threads reach only what the cursor owns: the shards open
// through DatasetShards, and the next epoch is planned from a PlanRequest
// and a SampleLocator the cursor holds (copies made when it starts), so
// nothing they do calls back into the dataset.
//
// Views: the SampleFields NextBatch hands out point into mapped shards (or
// into their own scratch: it reads with until_next_read, shard_view.h) and
// stay valid until the next NextBatch, the cursor's Stop or destruction.
// A slot whose wants_pieces the caller set gets a large Parquet value as
// its pieces (SampleFields::pieced, valid as the views), for a caller that
// copies it anyway (the C ABI's batch copy): then nothing copies it first.
// The first sample of a pass (a cold start, a resumption) may come from a
// peek (DatasetShards::PeekSample: one or two ranged reads of an
// uncompressed MDS shard not in the cache; a Parquet row group's piece
// read in memory, the read its shard's fetch then takes over) raced
// against its shard's download, whichever is first; a peek failure leaves
// the shard to serve it, unless it is a corruption no download heals
// (CorruptionMayHeal: the store said the shard is another size or version
// than the index's), which ends the pass at once: the first NextBatch and
// every later one return it (with the shard and sample), and the shard's
// download is not started for it (one started after the head start below
// fails as the peek did, once: the retries ask the same rule). The peek
// starts first, alone: the shard's download (head first: and the plan of
// the rest) starts once the peek is in, or once it has had
// peek_head_start to itself. Started together, the shard's transfer shared
// the one event loop (and, on a busy machine, the CPU) with the peek's
// answer, and a 256 KiB peeked sample came 15-20 ms after its server had
// sent it (bench/python/first_sample_phases.py). The shard
// stays the truth: the next NextBatch waits for it and checks that the
// peeked sample is exactly its bytes, or a Parquet row its values (a
// mismatch is kCorrupt).
//
// In flight (DatasetOptions::serve_in_flight): a position whose shard is
// not open yet, when that shard is downloading in this process, is read
// from the download (DatasetShards::ReadInFlight) once its bytes are in:
// the batch's first position waits for them (a download wait), later ones
// are taken only if there already. Their bytes are kept until the next
// NextBatch; the order is the plan's either way. When the first sample's
// shard is still downloading once the plan is in, its early open is left
// running (the prefetcher's own open of it waits on that download) so
// that the consumer reads the download meanwhile.
//
// Head first: a cursor may start from the head of its plan (the first
// ids, planner::PlanWorkerHead) and a PlanRest. Its first NextBatch starts
// planning the whole on a thread of its own (after the peek's head start)
// and serves the first sample from a peek meanwhile; the prefetcher starts once the whole plan is in
// (the consumer waits for it there, counted as an `other` wait). The first
// sample's shard (the head's one shard) opens meanwhile on another thread,
// as the prefetcher's scan would open it first: the prefetcher gets it as
// a seed (one open, one pin, as a handoff's shards), so the samples after
// the first do not wait for the plan and then for their shard. The whole
// plan must begin with the head (else kInternal), so the order is the
// whole plan's either way.
//
// In windows: a cursor whose PlanRest has window_ids > 0 never holds its
// whole plan. Its plan comes a window of window_ids positions at a time
// from PassWindows (a producer thread running planner::PlanWorkerWindows,
// a bounded queue ahead of the consumer), the same ids in the same order
// (sample_in_epoch included: the planner starts the stream there). The
// cursor holds the window being read (ids and index per position) and one
// ShardPrefetcher for the whole pass, whose order grows a window at a time
// as its look ahead reaches the next (ShardPrefetcher's MoreOrder): it
// opens and drops exactly what it would over the whole plan, with no
// thread started or stopped at a window's end. The windows it took ahead
// wait in ahead_ for the consumer; it frees the windows the consumer has
// passed. A batch may span windows (its first position holds its shards).
// Near the last window's end the next epoch's first
// shards are opened from the next epoch's head (PlanWorkerHead), and no
// next-epoch ids are handed over (the next pass plans itself). The head,
// when given, is checked against the first window as the whole plan is.
//
// Thread safety: one thread at a time (the prefetcher's threads are
// internal). Fork: belongs to the process that made it (a forked child
// abandons it, see StreamingDataset).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/dataset/consumer_waits.h"
#include "engine/dataset/dataset_columns.h"
#include "engine/dataset/dataset_shards.h"
#include "engine/dataset/node_checkpoints.h"
#include "engine/dataset/pass_windows.h"
#include "engine/dataset/position_lookup.h"
#include "engine/dataset/sample_peek.h"
#include "engine/dataset/shard_prefetcher.h"
#include "engine/planner/plan.h"
#include "formats/dataset/sample_locator.h"
#include "formats/index/index.h"

namespace sluice {

// Which pass: the epoch, the samples of all ranks skipped before it
// (resumption) and the worker.
struct IterationPlace {
  int64_t epoch = 0;
  int64_t sample_in_epoch = 0;
  int64_t worker = 0;
  int64_t num_workers = 1;
};

// The following epoch's plan for the same worker, made on the prefetch
// thread near the end of this one.
struct NextEpochPlan {
  planner::PlanRequest request;  // for epoch + 1 from its start
  int64_t node = 0, rank_in_node = 0;
  // Where the node shares that epoch's checkpoints (asked on the thread
  // that plans it).
  std::optional<NodeCheckpointsPlace> checkpoints = std::nullopt;
};

// The whole plan of a cursor made from its head: the worker's plan for
// `request` (PlanWorker of node, rank_in_node and the place's worker).
struct PlanRest {
  planner::PlanRequest request;
  int64_t node = 0, rank_in_node = 0;
  // > 0: the pass is planned in windows of this many ids ("In windows"),
  // and the head may be empty (no peek).
  size_t window_ids = 0;
  // In windows: the whole plan when the head was it (PassWindowSource).
  std::shared_ptr<const std::vector<int64_t>> planned = nullptr;
  // In windows with skipped steps ahead: `request` is the rank's order
  // (one worker), dealt out by this (PassWindowSource::skip).
  std::optional<SkipDealer> skip = std::nullopt;
  // The node's checkpoints of the epoch (node_checkpoints.h), or null.
  std::shared_ptr<const planner::EpochCheckpoints> checkpoints = nullptr;
  // Not in windows, without `checkpoints`: where the node shares them,
  // asked on the thread that plans the rest (a head that needs none is
  // not kept waiting for them).
  std::optional<NodeCheckpointsPlace> checkpoints_place = std::nullopt;
};

struct IterationOptions {
  size_t window = 1;            // prefetch window in samples (>= 1)
  bool keep_reused = false;     // see ShardPrefetcher (no cache limit)
  size_t open_threads = 1;      // see ShardPrefetcher
  // Under a cache_limit: opens beyond the one the consumer needs next never
  // wait for room (ShardPrefetcher's try_opener).
  bool extra_opens_never_wait = false;
  // The first sample may come from a peek (see IterationCursor).
  bool peek_first_sample = false;
  // How long the peek has the link to itself before the shard's download
  // starts beside it: what a peek stalled on its server costs the first
  // sample at most, beyond the shard's own time (the dataset's is
  // DatasetOptions::peek_head_start).
  std::chrono::milliseconds peek_head_start{0};
  // In windows: how far past its window the prefetcher's look beyond it
  // may ask for windows (PrefetchSchedule::LookAheadReach of the largest
  // shard: the bound WindowedPassPositions counts).
  size_t look_ahead = SIZE_MAX;
  // The prefetch threads fault a shard's pages in only once the consumer
  // has been handed this many samples (its first batch; see OpenShard).
  size_t populate_after = 0;
  // Set where a stream is read in a single pass: its shards held for a
  // use beyond the window, and those let go opened for ranged reads
  // (PrefetchSchedule::Options::hold_room: these bytes, each shard
  // counted at DatasetShards::HeldBytes; DatasetShards::OpenRanged).
  std::optional<uint64_t> hold_bytes = std::nullopt;
};

// What a pass holds per position of its order, at most (the dataset's
// memory check counts it): in the cursor the id (8 bytes; its index in its
// shard is the id less the shard's first); in the prefetcher's schedule its
// shard (4), its next use (4, kept with keep_reused) and its shard's handle
// once scanned (8) (PrefetchSchedule::Part).
inline constexpr int64_t kPassBytesPerPosition = 24;
// Near a whole pass's end, the next epoch's plan: ids and shards (8 + 8).
inline constexpr int64_t kNextEpochBytesPerPosition = 16;

// The positions a pass in windows of `window_ids` holds at most, when the
// prefetcher's window is `window` positions and its look beyond the window
// reaches `look_ahead` past it (IterationOptions::look_ahead). The
// prefetcher's schedule keeps the windows from the consumer's to its
// known end, which is asked for a window at a time while it is short of
// the window's or the look ahead's end (2 windows + window + look_ahead;
// the cursor's windows are among them); the producer holds
// kPassWindowsQueued windows and one being filled (at 16 and 8 bytes an
// id, counted here at kPassBytesPerPosition). Saturates at INT64_MAX.
int64_t WindowedPassPositions(uint64_t window_ids, uint64_t window, uint64_t look_ahead);

class IterationCursor {
 public:
  // What a finished cursor leaves for the next pass: the next epoch's ids
  // and its shuffle warning (when its prefetch thread planned them; see
  // planner::PlanWorker) and its first shards, opened.
  struct Handoff {
    std::optional<std::vector<int64_t>> next_ids;
    std::optional<std::string> next_shuffle_warning;
    ShardPrefetcher::ShardMap opened;
  };

  // `ids`: the worker's sample ids in order (-1 padding removed), or with
  // `rest` the first of them (at least one; see "Head first"; none or more
  // in windows);
  // `locator` maps them to shards. `shards` must outlive the cursor. With
  // `next`, the shards of the next epoch's first window are opened near
  // the end (see ShardPrefetcher); `seed`: shards a previous cursor opened
  // for this one. options.window is clamped to the plan's size + 1.
  IterationCursor(IterationPlace place, std::vector<int64_t> ids,
                  std::shared_ptr<const SampleLocator> locator, DatasetShards* shards,
                  IterationOptions options, std::optional<NextEpochPlan> next,
                  ShardPrefetcher::ShardMap seed, std::optional<PlanRest> rest = std::nullopt);
  ~IterationCursor();
  IterationCursor(const IterationCursor&) = delete;
  IterationCursor& operator=(const IterationCursor&) = delete;

  const IterationPlace& place() const { return place_; }

  // What one NextBatch call adds to the dataset's counters.
  struct BatchTally {
    ConsumerWaits waits;  // its wait for its first sample's shard, by cause
    uint64_t skipped = 0;  // samples of skipped shards passed over
    uint64_t bytes = 0;    // the stored bytes of the samples handed out (SampleFields::raw)
    // Positions ready past the call's last sample when it returned (how
    // far the prefetcher is ahead of the consumer).
    uint64_t lead = 0;
    // Shards the prefetcher held open for the consumer's position and
    // beyond, as the call's last Acquire left them (ShardPrefetcher::open_shards).
    uint64_t lead_shards = 0;
  };
  // Up to `max` next samples laid out by `columns`: ids[k] and (*out)[k] for
  // k < the returned count (0 = the pass is done); `out` is resized to at
  // least the count. Waits for its first sample's shard only (adding the
  // time to tally->waits), never while its samples pin shards. Samples of
  // skipped shards are passed over and counted in tally->skipped. The first
  // sample's failure is returned; a later one ends the batch short and is
  // returned by the next call (and every later one). With `out` null the
  // call hands out ids only: the same positions, waits and prefetching, no
  // sample read and no bytes counted (for a consumer that reads each id
  // itself, through Get).
  Result<size_t> NextBatch(size_t max, const DatasetColumns& columns, int64_t* ids,
                           std::vector<SampleFields>* out, BatchTally* tally);

  // Stops the prefetch threads and hands over what they prepared for the
  // next epoch; a peek still running is cancelled, its request in flight
  // ended (the destructor waits for it: briefly). A whole plan still being
  // made is cancelled (the planner stops at its next check between chunks,
  // planner::CheckPlanCancelled) and dropped; so is the next epoch's plan
  // unless `want_next` (the next pass is that epoch's start), which is
  // then waited for. The destructor cancels both. NextBatch must not be
  // called afterwards.
  Handoff Stop(bool want_next = true);

  // Tests only: called on the thread planning the rest (head first) before
  // it plans, so a test can hold the plan back deterministically. Set it
  // while no cursor plans; null (the default) for none.
  static void SetRestPlanHookForTesting(std::function<void()> hook);
  // Tests only: called on the consumer's thread once a pass's first
  // sample is read from its open shard, or handed out otherwise (a peek,
  // a download in flight), twice: with `ended` false before the
  // prefetcher hears that its hold ends (so a test can look at what was
  // opened before), then true after it (so a test can wait for the shards
  // the prefetcher then opens before the batch goes on). Null (the
  // default) for none.
  static void SetFirstRowHookForTesting(std::function<void(bool ended)> hook);

 private:
  // The prefetcher over ids_ (once they are the whole plan).
  void StartPrefetcher();
  // Head first: starts planning the whole and opening the first sample's
  // shard (once).
  void StartRest();
  // Head first: waits for the whole plan, checks that it begins with the
  // head, takes it and starts the prefetcher, seeded with the first
  // sample's shard when its open succeeded (a failed one is left to the
  // prefetcher, which reports it); the waits are added to *waits.
  Status TakeRest(ConsumerWaits* waits);
  // With `wait` false: null when the shard cannot be had without waiting.
  Result<std::shared_ptr<const OpenedShard>> OpenShard(size_t g, const std::atomic<bool>* cancel,
                                                       bool wait);
  // OpenShard without taking the first shard's open in flight: the
  // store's open (and the page faults ahead); the head open's own body.
  // `consumer_waits`: DatasetShards::Open's.
  Result<std::shared_ptr<const OpenedShard>> OpenShardItself(size_t g, const std::atomic<bool>* cancel,
                                                             bool wait, bool consumer_waits);
  // Whether the consumer waits for the first read of shard g's open: the
  // pass's first shard, before any sample of a shard was handed out (a
  // resumption's, a new pass's first rows). Its Parquet group then decodes
  // as its rows are read, from the first row's page on, not whole first.
  bool ConsumerWaitsFor(size_t g) const {
    return g == first_shard_ && handed_out_.load(std::memory_order_relaxed) == 0;
  }
  // The first shard's open left in flight (head_flight_) when `g` is its
  // shard and, without `wait`, it is done (then no longer held here);
  // invalid otherwise. *not_now: it is g's but still running and `wait` is
  // false.
  std::shared_future<Result<std::shared_ptr<const OpenedShard>>> TakeHeadFlight(size_t g, bool wait,
                                                                                bool* not_now);
  // Drops head_flight_ (the prefetcher has its own shard by now, or stopped).
  void DropHeadFlight();
  // At the pass's end, when its last sample was served in flight: waits
  // for that sample's shard (its download's end) and returns its error.
  Status EndAfterFlight(ConsumerWaits* waits);
  // The next epoch's shard per position (on the prefetch thread).
  Result<std::vector<size_t>> PlanNext();
  // Drops the first shard's early open once done, when TakeRest left it
  // downloading (its samples served in flight meanwhile).
  void DropHeadOpen();
  // How long the consumer waits for a shard before it looks again for
  // the shard's download in flight, while that download has not begun.
  static constexpr std::chrono::milliseconds kFlightLook{2};
  // Position p's sample (in the window) from its shard's download in
  // flight (DatasetShards::ReadInFlight; with `wait`, waiting for its
  // bytes, a download wait when it did wait) into *fields and *id: false
  // when it does not come from there. Its bytes are kept in flown_.
  Result<bool> FromFlight(size_t p, bool wait, const DatasetColumns& columns, int64_t* id,
                          SampleFields* fields, ConsumerWaits* waits);
  // The pass's first sample from a peek raced against its shard (see
  // above): true when it is in ids[0] and (*out)[0] (pos_ is then 1).
  bool FirstFromPeek(const DatasetColumns& columns, int64_t* ids, std::vector<SampleFields>* out,
                     ConsumerWaits* waits);
  // Sample i of shard g into peeked_: the peek alone for up to
  // peek_head_start, then (if still running) raced against the
  // prefetcher's open of the shard, or (head first, no prefetcher yet)
  // against the shard's early open. Returns with StartBehindPeek done,
  // unless the peek's failure ended the pass (failed_). False: the shard
  // is to serve it, or failed_ is set.
  bool PeekFirst(size_t g, uint32_t i, ConsumerWaits* waits);
  // Starts what the peek's head start holds back (once; later calls do
  // nothing): head first, StartRest; else the prefetcher's scan.
  void StartBehindPeek();
  // Whether the shard serving position 0 is in, without waiting: head
  // first, its early open succeeded; else the prefetcher has position 0.
  bool ShardInForPeek();
  // Waits for the first sample's shard and checks the peeked sample
  // against it; then drops the peeked bytes.
  Status CheckPeeked(const DatasetColumns& columns, ConsumerWaits* waits);
  // The samples of the current window from pos_ into ids[*k..] and
  // (*out)[*k..] (NextBatch's loop; `first_batch` when the call began
  // before populate_after_). Returns whether the batch must end here (a
  // failure, stored in *failure when it is the call's first sample, or a
  // sample on disk past the first batch).
  bool ReadWindow(size_t max, const DatasetColumns& columns, int64_t* ids, std::vector<SampleFields>* out,
                  BatchTally* tally, bool first_batch, size_t* k, Status* failure);
  // In windows: makes the next window current (the one the prefetcher took
  // ahead, or one it is asked for now; the wait added to *waits). On
  // failure nothing changes.
  Status NextWindow(ConsumerWaits* waits);
  // Makes `w` the current window (positions from base_).
  void InstallWindow(PassWindow w);
  // The index in shard g of the sample at position p of the window.
  uint32_t LocalOf(size_t p, size_t g) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(ids_[p]) - locator_->start(g));
  }
  // The samples (indexes in shard g) a ranged open of g for its first use
  // at or after position `from` reads ahead (OpenedShard::FillAhead): of
  // that use and of those following it closely within a window. None in
  // windows. Called on the prefetch threads.
  std::vector<uint32_t> RangedAhead(size_t g, size_t from, size_t window) const;
  // Position p of the window through *at: the sample's index in its shard
  // (at->g(), at->shard()).
  uint32_t Resolve(PositionLookup* at, size_t p) {
    return at->Resolve(*prefetcher_, *locator_, base_ + p, ids_[p]);
  }
  void ResetLookups() {
    run_at_.Reset();
    offsets_at_.Reset();
    bytes_at_.Reset();
  }
  // The pass's first sample was read (a lazy Parquet group decodes its
  // pages in that read), or handed out from a peek or a download in
  // flight, once: the prefetcher, which held its other opens until then
  // (ShardPrefetcher's hold_first), opens ahead, and the rest of this
  // batch may find them open. Ending it only when the call returned ended
  // a pass's first batch at its first shard.
  void EndHold();
  // Adds the prefetcher's last wait (if any) to *waits.
  void TakeWait(ConsumerWaits* waits);
  // Cache hints for the samples a few positions after p (positions before
  // `ready` only: their shards are open).
  // Inlined into ReadWindow, its only caller: a call a sample cost a tenth
  // of the consumer's instructions per 1 KiB sample.
  [[gnu::always_inline]] inline void PrefetchAhead(size_t p, size_t ready);
  // Its second stage's hints of every position from prefetched_to_ (or p
  // + 1) to kAhead on: out of line, since past a window's first positions
  // PrefetchAhead's own one hint a sample covers it.
  [[gnu::noinline]] void PrefetchAheadFrom(size_t p, size_t ready);
  static constexpr size_t kAhead = 16;  // PrefetchAhead's distance, in positions

  const IterationPlace place_;
  // The head until TakeRest, then the whole plan (in windows: the current
  // window, which starts at position base_ of the pass).
  std::vector<int64_t> ids_;
  size_t base_ = 0;
  const size_t pass_window_;  // PlanRest::window_ids (0: the whole plan)
  bool last_window_ = true;   // in windows: no window follows the current one
  std::vector<size_t> shard_of_;  // per position (moved into the prefetcher)
  size_t first_shard_ = 0;        // the shard of position 0 (when there is one)
  const std::shared_ptr<const SampleLocator> locator_;
  DatasetShards* const shards_;
  const std::optional<NextEpochPlan> next_;
  // Kept to start the prefetcher with (head first: once the rest is in).
  IterationOptions options_;
  ShardPrefetcher::ShardMap seed_;
  // Head first: what plans the whole, then the whole plan being made
  // (from the first NextBatch until TakeRest).
  std::optional<PlanRest> rest_;
  std::future<Result<std::vector<int64_t>>> rest_plan_;
  bool rest_started_ = false;  // StartRest ran
  // Head first: the first sample's shard opening while the rest is planned
  // (from the first NextBatch until TakeRest); head_cancel_ ends its waits.
  // Shared: the first sample's peek looks at it before TakeRest takes it.
  std::shared_future<Result<std::shared_ptr<const OpenedShard>>> head_open_;
  std::atomic<bool> head_cancel_{false};
  // That open, left running by TakeRest (its shard served in flight), for
  // the prefetcher's open of shard head_flight_shard_ to take rather than
  // open the shard a second time: one open, one pin, so the shard counts
  // once (a download, or a hit), never as both. Taken by the first open of
  // that shard (TakeHeadFlight); guarded by head_flight_mu_ (the prefetch
  // threads take it).
  std::mutex head_flight_mu_;
  std::shared_future<Result<std::shared_ptr<const OpenedShard>>> head_flight_;
  size_t head_flight_shard_ = 0;
  // Stop the planner of the rest (head first) and of the next epoch
  // (PlanNext) at their next check: set by Stop and the destructor.
  std::atomic<bool> rest_cancel_{false};
  std::atomic<bool> next_cancel_{false};
  size_t pos_ = 0;
  size_t prefetched_to_ = 0;  // PrefetchAhead has hinted positions below this
  // ReadWindow's look-ups: its runs, and PrefetchAhead's two stages (each
  // moves a position a sample, in runs of its own). Reset after each
  // Acquire (see position_lookup.h).
  PositionLookup run_at_, offsets_at_, bytes_at_;
  // Written by the prefetch thread (PlanNext), read after it is joined.
  std::optional<std::vector<int64_t>> next_ids_;
  std::optional<std::string> next_shuffle_warning_;
  // True while NextBatch waits for its first sample's shard: the prefetch
  // threads then open shards without faulting all their pages in first.
  std::atomic<bool> consumer_waiting_{false};
  // Samples handed out so far (pos_, for the prefetch threads; see
  // populate_after_).
  std::atomic<size_t> handed_out_{0};
  bool may_peek_;  // the first sample's peek is still to try
  // A sample's read began (EndHold ran): a prefetcher started later does
  // not hold its opens.
  bool first_read_ = false;
  const size_t populate_after_;
  // The peeked first sample: backs the views of the batch that yielded it,
  // until CheckPeeked.
  std::optional<PeekedSample> peeked_;
  // The peek's failure that ended the pass (see above): every NextBatch's.
  Status failed_;
  // Samples the last NextBatch served from downloads in flight: back its
  // views until the next.
  std::vector<PeekedSample> flown_;
  // The prefetcher position of the last sample served in flight (FromFlight).
  // When it is the pass's last, the call that ends the pass first waits for
  // that shard's open (EndAfterFlight): its download's failure is the
  // consumer's, and the pass ends with its download counted.
  std::optional<size_t> last_flown_;
  // Stopped by Stop and the destructor: a peek still running ends its
  // request in flight and makes no further one (see PeekSampleFromRemote).
  // Declared before losing_peek_, which uses it.
  std::stop_source peek_stop_;
  // A peek that lost the race, still running: its destructor waits for it,
  // cancelled, so only until its request ends (a closing socket, not the
  // server's answer nor the store's timeouts).
  std::future<Status> losing_peek_;
  // In windows: the producer (from the first NextBatch on; cancelled before
  // the prefetcher is stopped, whose thread may wait on it).
  std::unique_ptr<PassWindows> windows_;
  // In windows: the windows the prefetcher took ahead of the consumer's
  // (their ids and indexes; their shards are the prefetcher's), in order.
  // Filled by whichever thread extends the prefetcher's order.
  std::mutex ahead_mu_;
  std::deque<PassWindow> ahead_;
  // The prefetcher position of the current batch's first sample: a batch
  // spanning windows keeps its shards until the next call.
  size_t batch_from_ = 0;
  // Last: its threads stop before the members they use go. Null until
  // the whole plan is in.
  std::unique_ptr<ShardPrefetcher> prefetcher_;
};

}  // namespace sluice

#include "engine/dataset/iteration_cursor.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <utility>

#include "base/exception_status.h"
#include "engine/dataset/order_parts.h"
#include "engine/dataset/stream_shards.h"
#include "formats/dataset/locate_each.h"

namespace sluice {
namespace {

std::function<void()>& RestPlanHook() {
  static std::function<void()> hook;
  return hook;
}

std::function<void(bool)>& FirstRowHook() {
  static std::function<void(bool)> hook;
  return hook;
}

struct OrderParts {
  size_t positions = kOrderPartPositions;
  std::function<void(size_t begin, size_t count)> on_part;
};

OrderParts& OrderPartsSetting() {
  static OrderParts parts;
  return parts;
}

}  // namespace

// kPassBytesPerPosition in step with what it counts: the cursor's id and
// the schedule's shard, next use and handle per position.
static_assert(kPassBytesPerPosition ==
              sizeof(int64_t) + sizeof(decltype(PrefetchSchedule::Part::shard_of)::value_type) +
                  sizeof(decltype(PrefetchSchedule::Part::next_use)::value_type) + sizeof(const void*));

int64_t WindowedPassPositions(uint64_t window_ids, uint64_t window, uint64_t look_ahead) {
  const unsigned __int128 held = static_cast<unsigned __int128>(window_ids) * (3 + kPassWindowsQueued) +
                                 window + look_ahead;
  return held > INT64_MAX ? INT64_MAX : static_cast<int64_t>(held);
}

void IterationCursor::SetRestPlanHookForTesting(std::function<void()> hook) {
  RestPlanHook() = std::move(hook);
}

void IterationCursor::SetFirstRowHookForTesting(std::function<void(bool)> hook) {
  FirstRowHook() = std::move(hook);
}

void SetOrderPartsForTesting(size_t positions,
                             std::function<void(size_t begin, size_t count)> on_part) {
  OrderPartsSetting() = OrderParts{positions, std::move(on_part)};
}

namespace {

// A whole plan's shard per position for [0, count): its first part
// (order_parts.h).
std::vector<size_t> LocateFirstPart(const SampleLocator& locator, std::span<const int64_t> ids) {
  const OrderParts& setting = OrderPartsSetting();
  const size_t count = std::min(std::max<size_t>(setting.positions, 1), ids.size());
  std::vector<size_t> shard_of(count);
  LocateEach(locator, ids.first(count), shard_of.data(), nullptr);
  if (setting.on_part && count > 0) setting.on_part(0, count);
  return shard_of;
}

// The part after the first `located` positions (every part but the last
// has the first one's size, as the schedule requires).
ShardPrefetcher::OrderPart LocateNextPart(const SampleLocator& locator,
                                          std::span<const int64_t> ids, size_t located) {
  const OrderParts& setting = OrderPartsSetting();
  const size_t count = std::min(std::max<size_t>(setting.positions, 1), ids.size() - located);
  ShardPrefetcher::OrderPart part;
  part.shard_of.resize(count);
  LocateEach(locator, ids.subspan(located, count), part.shard_of.data(), nullptr);
  part.last = located + count == ids.size();
  if (setting.on_part) setting.on_part(located, count);
  return part;
}

}  // namespace

void IterationCursor::EndHold() {
  if (first_read_) return;
  first_read_ = true;
  const auto& hook = FirstRowHook();
  if (hook) hook(false);
  if (prefetcher_) prefetcher_->EndHold();
  if (hook) hook(true);
}

IterationCursor::IterationCursor(IterationPlace place, std::vector<int64_t> ids,
                                 std::shared_ptr<const SampleLocator> locator,
                                 DatasetShards* shards, IterationOptions options,
                                 std::optional<NextEpochPlan> next,
                                 ShardPrefetcher::ShardMap seed, std::optional<PlanRest> rest)
    : place_(place),
      ids_(std::move(ids)),
      pass_window_(rest ? rest->window_ids : 0),
      locator_(std::move(locator)),
      shards_(shards),
      next_(std::move(next)),
      options_(options),
      seed_(std::move(seed)),
      rest_(std::move(rest)),
      may_peek_(options.peek_first_sample && !ids_.empty()),
      populate_after_(options.populate_after) {
  if (rest_) {
    shard_of_.resize(ids_.size());  // the head
    LocateEach(*locator_, ids_, shard_of_.data(), nullptr);
  } else {
    shard_of_ = LocateFirstPart(*locator_, ids_);
  }
  if (!shard_of_.empty()) first_shard_ = shard_of_[0];
  if (pass_window_ > 0) {
    windows_ = std::make_unique<PassWindows>(
        PassWindowSource{rest_->request, rest_->node, rest_->rank_in_node, rest_->skip ? 0 : place_.worker,
                         pass_window_, rest_->planned, rest_->skip, rest_->checkpoints},
        locator_, kPassWindowsQueued);
  }
  if (!rest_) StartPrefetcher();
}

void IterationCursor::StartPrefetcher() {
  const IterationOptions& options = options_;
  // In windows the dataset bounds the window (by the whole pass's size),
  // as the whole plan's size bounds it here: the same window either way.
  const size_t window = pass_window_ > 0 ? std::max<size_t>(options.window, 1)
                                         : std::clamp<size_t>(options.window, 1, ids_.size() + 1);
  // In windows, the order grows by the windows that follow (the
  // prefetcher asks for them as its look ahead reaches them).
  ShardPrefetcher::MoreOrder more;
  if (pass_window_ == 0 && shard_of_.size() < ids_.size()) {
    // A whole plan in parts (order_parts.h): ids_ stays as it is while the
    // prefetcher lives, which calls this one call at a time.
    more = [this, located = shard_of_.size()]() mutable -> Result<ShardPrefetcher::OrderPart> {
      ShardPrefetcher::OrderPart part = LocateNextPart(*locator_, ids_, located);
      located += part.shard_of.size();
      return part;
    };
  } else if (!last_window_) {
    more = [this]() -> Result<ShardPrefetcher::OrderPart> {
      SLUICE_ASSIGN_OR_RETURN(PassWindow w, windows_->Take());
      ShardPrefetcher::OrderPart part{std::move(w.shard_of), w.last};
      w.shard_of = {};
      std::lock_guard<std::mutex> lock(ahead_mu_);
      ahead_.push_back(std::move(w));
      return part;
    };
  }
  prefetcher_ = std::make_unique<ShardPrefetcher>(
      std::move(shard_of_), window,
      [this](size_t g, const std::atomic<bool>* cancel) { return OpenShard(g, cancel, true); },
      next_ ? ShardPrefetcher::NextOrder([this] { return PlanNext(); }) : nullptr,
      std::move(seed_), options.keep_reused, options.open_threads,
      options.extra_opens_never_wait
          ? ShardPrefetcher::TryOpener([this](size_t g, const std::atomic<bool>* cancel) {
              return OpenShard(g, cancel, false);
            })
          : nullptr,
      std::move(more), options.look_ahead,
      // Where an open decodes (Parquet), until the first sample has been
      // read only its shard opens (the one the consumer waits for): a
      // resumption's first group opens without the next groups' whole
      // decodes beside it on the same cores (resume at 1M rows:
      // BENCHMARKS.md, issue 35). MDS and the text formats only map
      // theirs: a hold would only delay the next shards' downloads.
      /*hold_first=*/!first_read_ && !ids_.empty() && shards_->OpenDecodes(first_shard_),
      options.hold_bytes,
      options.hold_bytes ? std::function<uint64_t(size_t)>(
                               [shards = shards_](size_t g) { return shards->HeldBytes(g); })
                         : nullptr,
      options.hold_bytes
          ? ShardPrefetcher::RangedOpener(
                [this, window](size_t g, size_t from,
                               const std::atomic<bool>*) -> Result<std::shared_ptr<const OpenedShard>> {
                  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const OpenedShard> shard,
                                          shards_->OpenRanged(g));
                  if (shard && shard->ranged()) shard->FillAhead(RangedAhead(g, from, window));
                  return shard;
                })
          : nullptr);
  shard_of_ = {};
  seed_ = {};
}

std::vector<uint32_t> IterationCursor::RangedAhead(size_t g, size_t from, size_t window) const {
  std::vector<uint32_t> samples;
  // In windows ids_ is the consumer's window, replaced as it moves on.
  if (pass_window_ > 0) return samples;
  const uint64_t first = locator_->start(g), end = locator_->start(g + 1);
  auto in_g = [&](size_t p) {
    const uint64_t id = static_cast<uint64_t>(ids_[p]);
    return id >= first && id < end;
  };
  size_t p = from;
  while (p < ids_.size() && !in_g(p)) ++p;
  // The uses this open serves: the scan meets each before the consumer
  // passes the one before it, a window apart at most; half a window
  // apart leaves the scan room to lag, and a sample read ahead for a use
  // the next open serves would be read twice.
  const size_t gap = std::max<size_t>(window / 2, 1);
  const size_t until = std::min(ids_.size(), p + window);
  for (size_t last = p; p < until && p - last <= gap; ++p) {
    if (!in_g(p)) continue;
    samples.push_back(static_cast<uint32_t>(static_cast<uint64_t>(ids_[p]) - first));
    last = p;
  }
  return samples;
}

void IterationCursor::StartRest() {
  if (!rest_ || rest_plan_.valid() || rest_started_) return;
  rest_started_ = true;
  if (windows_) {
    windows_->Start();  // a failure to start is Take's to report
  } else try {
    rest_plan_ = std::async(std::launch::async, [rest = *rest_, worker = place_.worker,
                                                 hook = RestPlanHook(), cancel = &rest_cancel_]()
                                                    -> Result<std::vector<int64_t>> {
      try {
        if (hook) hook();
        // Not made for a pass already stopped (PlanWorker then says so).
        const auto checkpoints = rest.checkpoints || !rest.checkpoints_place || cancel->load()
                                     ? rest.checkpoints
                                     : SharedEpochCheckpoints(*rest.checkpoints_place, rest.request);
        return planner::PlanWorker(rest.request, rest.node, rest.rank_in_node, worker, nullptr,
                                   checkpoints.get(), cancel);
      } catch (...) {
        return StatusFromException(std::current_exception(), "planning the rest of the epoch");
      }
    });
  } catch (...) {
    // No thread (or no memory for its copy of the request): TakeRest reports it.
    std::promise<Result<std::vector<int64_t>>> failed;
    failed.set_value(StatusFromException(std::current_exception(), "starting to plan the rest of the epoch"));
    rest_plan_ = failed.get_future();
  }
  // The shard the prefetcher's scan opens first, opened now rather than
  // after the plan (unless a previous cursor opened it for this one).
  if (ids_.empty() || seed_.count(first_shard_)) return;
  try {
    head_open_ = std::async(std::launch::async, [this, g = first_shard_]()
                                                    -> Result<std::shared_ptr<const OpenedShard>> {
      try {
        // Never OpenShard: once TakeRest has left this open in flight,
        // OpenShard would take this very future and wait on itself. The
        // consumer waits for its first row (see ConsumerWaitsFor).
        return OpenShardItself(g, &head_cancel_, true, /*consumer_waits=*/true);
      } catch (...) {
        return StatusFromException(std::current_exception(), "opening the first sample's shard");
      }
    });
  } catch (...) {
    // No thread: the prefetcher opens it.
  }
}

Status IterationCursor::TakeRest(ConsumerWaits* waits) {
  if (!rest_) return Status::Ok();
  StartRest();
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<int64_t>> whole = std::vector<int64_t>();
  if (windows_) {
    Result<PassWindow> first = windows_->Take();
    if (first.ok()) {
      whole = std::move(first->ids);  // checked against the head below, then put back
      last_window_ = first->last;
      shard_of_ = std::move(first->shard_of);
    } else {
      whole = first.status();
    }
  } else {
    whole = rest_plan_.get();
  }
  waits->Add(start, std::chrono::steady_clock::now(), nullptr);
  rest_.reset();
  if (!whole.ok()) return whole.status().WithContext("planning the rest of the epoch after its first samples");
  // A first window shorter than the head is the whole pass (then it must
  // hold the head too).
  if (whole->size() < ids_.size() || !std::equal(ids_.begin(), ids_.end(), whole->begin())) {
    return InternalError("the epoch's plan does not begin with the " + std::to_string(ids_.size()) +
                         " ids planned first (epoch " + std::to_string(place_.epoch) + ", worker " +
                         std::to_string(place_.worker) + ")");
  }
  ids_ = std::move(*whole);
  if (!windows_) shard_of_ = LocateFirstPart(*locator_, ids_);
  if (!shard_of_.empty()) first_shard_ = shard_of_[0];
  // Still downloading, with samples to serve from its bytes in flight:
  // the prefetcher starts now, its scan's open of the shard takes this
  // open's result when it comes (TakeHeadFlight: the same pin, so the shard
  // counts once), and the consumer reads the download meanwhile. The
  // cursor's copy is dropped once in (DropHeadOpen).
  const bool head_in_flight =
      head_open_.valid() && !ids_.empty() && shards_->MayServeInFlight(first_shard_) &&
      head_open_.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  if (head_in_flight) {
    std::lock_guard<std::mutex> lock(head_flight_mu_);
    head_flight_ = head_open_;
    head_flight_shard_ = first_shard_;
  }
  if (head_open_.valid() && !head_in_flight) {
    const auto opening = std::chrono::steady_clock::now();
    Result<std::shared_ptr<const OpenedShard>> shard = head_open_.get();
    head_open_ = {};  // its copy would pin the shard
    const bool opened = shard.ok() && *shard;
    waits->Add(opening, std::chrono::steady_clock::now(), opened ? &(*shard)->open_timing() : nullptr);
    if (opened) seed_.emplace(first_shard_, std::move(*shard));
  }
  StartPrefetcher();
  return Status::Ok();
}

IterationCursor::~IterationCursor() {
  peek_stop_.request_stop();
  head_cancel_.store(true);
  rest_cancel_.store(true);
  next_cancel_.store(true);
  // First: the prefetch thread may wait on the next window.
  if (windows_) windows_->Cancel();
  prefetcher_.reset();
  windows_.reset();
  if (rest_plan_.valid()) rest_plan_.wait();
  if (head_open_.valid()) head_open_.wait();
}

std::shared_future<Result<std::shared_ptr<const OpenedShard>>> IterationCursor::TakeHeadFlight(
    size_t g, bool wait, bool* not_now) {
  std::lock_guard<std::mutex> lock(head_flight_mu_);
  *not_now = false;
  if (!head_flight_.valid() || g != head_flight_shard_) return {};
  if (!wait && head_flight_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    *not_now = true;
    return {};
  }
  return std::exchange(head_flight_, {});
}

void IterationCursor::DropHeadFlight() {
  std::lock_guard<std::mutex> lock(head_flight_mu_);
  head_flight_ = {};
}

Result<std::shared_ptr<const OpenedShard>> IterationCursor::OpenShard(
    size_t g, const std::atomic<bool>* cancel, bool wait) {
  // The first shard's early open, still under way when the prefetcher
  // started: its result is this open's (a second open would wait on the
  // same download and count it again as a cache hit). Its waits end with
  // head_cancel_, which is set whenever the prefetcher's cancel is.
  bool not_now = false;
  auto flight = TakeHeadFlight(g, wait, &not_now);
  if (not_now) return std::shared_ptr<const OpenedShard>();
  if (flight.valid()) return flight.get();
  return OpenShardItself(g, cancel, wait, ConsumerWaitsFor(g));
}

Result<std::shared_ptr<const OpenedShard>> IterationCursor::OpenShardItself(
    size_t g, const std::atomic<bool>* cancel, bool wait, bool consumer_waits) {
  auto shard = shards_->Open(g, cancel, wait, consumer_waits);
  // Page faults here rather than in the consumer, for shards opened ahead.
  // Not while a consumer waits, nor before it has had its first batch: it
  // needs one sample of each shard, not all their pages, and a shuffled
  // first batch (a resumption, a new epoch) spans a dozen shards. Faulting
  // in a whole 64 MiB shard costs milliseconds from the page cache and a
  // full read where the cached file is on disk only (a warm cache after a
  // restart): there, populating the first window's shards held a resumed
  // first batch of 256 KiB samples for 0.3 s (1.4 GB read instead of 4 MB).
  if (shard.ok() && *shard && !consumer_waiting_.load(std::memory_order_relaxed) &&
      handed_out_.load(std::memory_order_relaxed) >= populate_after_) {
    (*shard)->Populate();
  }
  return shard;
}

Result<std::vector<size_t>> IterationCursor::PlanNext() {
  const auto checkpoints =
      next_->checkpoints ? SharedEpochCheckpoints(*next_->checkpoints, next_->request) : nullptr;
  if (pass_window_ > 0) {
    // In windows the next pass plans itself: only its first shards are
    // wanted here, from its head (no ids handed over).
    const size_t count = std::clamp<size_t>(options_.window, 1, pass_window_);
    SLUICE_ASSIGN_OR_RETURN(planner::WorkerHead head,
                            planner::PlanWorkerHead(next_->request, next_->node, next_->rank_in_node,
                                                    place_.worker, static_cast<int64_t>(count), nullptr,
                                                    checkpoints.get()));
    if (head.ids.size() > count) head.ids.resize(count);
    std::vector<size_t> order(head.ids.size());
    LocateEach(*locator_, head.ids, order.data(), nullptr);
    return order;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                          planner::PlanWorker(next_->request, next_->node, next_->rank_in_node,
                                              place_.worker, &next_shuffle_warning_, checkpoints.get(),
                                              &next_cancel_));
  std::vector<size_t> order(ids.size());
  LocateEach(*locator_, ids, order.data(), nullptr);
  next_ids_ = std::move(ids);
  return order;
}

IterationCursor::Handoff IterationCursor::Stop(bool want_next) {
  Handoff h;
  peek_stop_.request_stop();
  head_cancel_.store(true);
  rest_cancel_.store(true);
  if (!want_next) next_cancel_.store(true);
  if (windows_) windows_->Cancel();  // before the prefetcher: its thread may wait on it
  if (rest_plan_.valid()) rest_plan_.wait();  // nothing to hand over: the next epoch was not reached
  if (head_open_.valid()) head_open_.wait();  // nor its first shard (for this epoch)
  if (prefetcher_) h.opened = prefetcher_->StopAndTakeNext();
  DropHeadFlight();  // not taken: the prefetcher stopped before its first open
  h.next_ids = std::move(next_ids_);  // the thread that wrote them is joined
  h.next_shuffle_warning = std::move(next_shuffle_warning_);
  next_ids_.reset();
  next_shuffle_warning_.reset();
  return h;
}

Result<size_t> IterationCursor::NextBatch(size_t max, const DatasetColumns& columns,
                                          int64_t* ids, std::vector<SampleFields>* out,
                                          BatchTally* tally) {
  const bool ids_only = out == nullptr;
  flown_.clear();  // the last call's views end here
  if (!failed_.ok()) return failed_;
  DropHeadOpen();
  // A peek serves a sample's bytes before its shard; ids alone need none.
  if (ids_only) may_peek_ = false;
  const bool peek_now = may_peek_ && base_ + pos_ == 0 && max > 0 && !ids_.empty();
  // Head first: the whole plan is made while the first sample is peeked
  // (after the peek's head start: PeekFirst starts it).
  if (!peek_now) StartRest();
  if (peeked_) SLUICE_RETURN_IF_ERROR(CheckPeeked(columns, &tally->waits));
  if (peek_now) {
    may_peek_ = false;
    if (!ids_only && out->empty()) out->resize(1);
    if (FirstFromPeek(columns, ids, out, &tally->waits)) {
      tally->bytes += (*out)[0].raw.size();
      return size_t{1};
    }
    if (!failed_.ok()) return failed_;
  }
  if (!prefetcher_) SLUICE_RETURN_IF_ERROR(TakeRest(&tally->waits));
  SLUICE_RETURN_IF_ERROR(EndAfterFlight(&tally->waits));
  // A call that starts in the pass's first batch ends with it at a shard
  // read from disk (a restart's warm cache): each sample past it is a read
  // the first batch waits behind (a resumed first batch of 16 x 256 KiB
  // read 64 samples, 21 MB, before returning: 25 ms, against 9 ms).
  const bool first_batch = base_ + pos_ < populate_after_;
  size_t k = 0;
  Status failure = Status::Ok();
  while (!ReadWindow(max, columns, ids, out, tally, first_batch, &k, &failure) && k < max &&
         pos_ == ids_.size() && !last_window_) {
    // In windows: the batch goes on in the next window. Its failure is the
    // call's when no sample came before it, else the next call's.
    Status next = NextWindow(&tally->waits);
    if (!next.ok()) {
      if (k == 0) failure = std::move(next);
      break;
    }
  }
  if (!failure.ok()) return failure;
  // Served from a download in flight, before any shard's read began.
  if (k > 0 && !first_read_) EndHold();
  return k;
}

inline void IterationCursor::PrefetchAhead(size_t p, size_t ready) {
  // Reads miss the CPU cache. Two stages, so that neither waits on memory:
  // the offset entry of the sample 2 * kAhead positions on, then the bytes
  // of the one kAhead on (its entry loaded by the first stage). A run of
  // consecutive ids needs no first stage (its offset table is read in
  // order), but does need the second: the hardware prefetcher does not
  // follow a consumer that touches one sample's head every kilobyte or so
  // (measured: batch mode's CPU per 1 KiB sample fell by about a tenth).
  const int64_t* ids = ids_.data();
  if (size_t q = p + 2 * kAhead; q < ready && ids[q] != ids[p] + int64_t{2 * kAhead}) {
    uint32_t i;
    offsets_at_.Find(*prefetcher_, *locator_, base_ + q, ids[q], &i)->PrefetchOffsets(i);
  }
  // Every position up to kAhead on, each once. Past a window's first
  // positions the ones before p + kAhead were hinted by the calls before:
  // that one alone, here; the rest (the first call asks for its first
  // kAhead samples together: from disk, reads in parallel, not one after
  // another as the consumer reaches them) out of line.
  if (const size_t q = p + kAhead; prefetched_to_ == q && q < ready) {
    uint32_t i;
    bytes_at_.Find(*prefetcher_, *locator_, base_ + q, ids[q], &i)->Prefetch(i);
    prefetched_to_ = q + 1;
  } else {
    PrefetchAheadFrom(p, ready);
  }
}

void IterationCursor::PrefetchAheadFrom(size_t p, size_t ready) {
  const size_t to = std::min(p + kAhead + 1, ready);
  for (size_t q = std::max(prefetched_to_, p + 1); q < to; ++q) {
    uint32_t i;
    bytes_at_.Find(*prefetcher_, *locator_, base_ + q, ids_[q], &i)->Prefetch(i);
  }
  prefetched_to_ = std::max(prefetched_to_, to);
}

bool IterationCursor::ReadWindow(size_t max, const DatasetColumns& columns, int64_t* ids,
                                 std::vector<SampleFields>* out, BatchTally* tally, bool first_batch,
                                 size_t* k_io, Status* failure) {
  const bool ids_only = out == nullptr;
  const size_t end = ids_.size();
  size_t k = *k_io;
  if (!ids_only && out->size() < k + std::min(max - k, end - pos_)) out->resize(k + std::min(max - k, end - pos_));
  uint64_t waited_ns = 0;  // the prefetcher's sum; tally->waits has it by cause
  // The first window position at or past populate_after_ (NextBatch).
  const size_t stop_at = !first_batch ? end : populate_after_ > base_ ? std::min(end, populate_after_ - base_) : 0;
  // `from`: this call's first position that yields a sample (skipped
  // samples before it need no shard kept).
  size_t p = pos_, ready = pos_;  // positions in the window (the prefetcher's: base_ + p)
  if (k == 0) batch_from_ = base_ + pos_;
  uint64_t bytes = 0;  // a local: a store through `tally` per sample cost 5 instructions
  bool stop = false;
  ResetLookups();
  while (!stop && k < max && p < end) {
    if (p >= ready) {
      // Wait only for the call's first sample; the caller gets a shorter
      // batch rather than wait for the rest. Cold and shuffled, a batch's
      // samples lie in as many shards as it has samples, and waiting for
      // them all held the first sample back until most of a window had
      // downloaded. Under a cache_limit, waiting while this call's samples
      // pin shards could also need more room than one reader's working set
      // (see cache_budget.h). Warm, the prefetcher is a window ahead and
      // batches come back full.
      const bool wait = k == 0;
      if (wait) batch_from_ = base_ + p;
      // Not ready: its shard may be downloading here, with the sample's
      // bytes in already (or soon: then waiting on them rather than the
      // whole shard).
      auto got = prefetcher_->Acquire(batch_from_, base_ + p, &waited_ns, /*wait=*/false);
      bool flown = false;
      if (got.ok() && *got <= base_ + p && !ids_only &&
          shards_->MayServeInFlight(prefetcher_->shard_of(base_ + p))) {
        while (true) {
          Result<bool> served = FromFlight(p, wait, columns, &ids[k], &(*out)[k], &tally->waits);
          if (!served.ok()) {
            got = served.status();
            break;
          }
          flown = *served;
          if (flown || !wait) break;
          // Its download has not begun (or has ended): wait for the shard
          // a moment, then look again.
          consumer_waiting_.store(true, std::memory_order_relaxed);
          got = prefetcher_->Acquire(batch_from_, base_ + p, &waited_ns, true, kFlightLook);
          consumer_waiting_.store(false, std::memory_order_relaxed);
          TakeWait(&tally->waits);
          if (!got.ok() || *got > base_ + p) break;
        }
      }
      if (flown) {
        bytes += (*out)[k].raw.size();
        ++k;
        ++p;
        continue;
      }
      if (got.ok() && *got <= base_ + p && wait) {
        // The first shard's open, kept while it was in flight, would pin
        // that shard once its download ends: under a cache limit of one
        // shard, the wait for this position's shard would never end.
        if (head_open_.valid() && prefetcher_->shard_of(base_ + p) != first_shard_) {
          head_open_.wait();
          head_open_ = {};
          DropHeadFlight();
        }
        consumer_waiting_.store(true, std::memory_order_relaxed);
        got = prefetcher_->Acquire(batch_from_, base_ + p, &waited_ns, wait);
        consumer_waiting_.store(false, std::memory_order_relaxed);
        TakeWait(&tally->waits);
      }
      if (!got.ok()) {
        if (k == 0) *failure = got.status();  // else the next call reports it
        stop = true;
        break;
      }
      ready = std::min(*got - base_, end);
      if (ready <= p) {
        stop = true;
        break;
      }
      ResetLookups();  // the Acquires above may have freed passed parts
    }
    // One run of ready positions reading the same opened shard at a time:
    // its shard and first sample are resolved once (in order, and mostly
    // under py1e, a batch is a few long runs).
    Resolve(&run_at_, p);
    const OpenedShard* shard = run_at_.shard();
    const size_t run_end = run_at_.RunEnd(base_ + ready) - base_;
    // A shard opened before the first batch and still read from disk a
    // sample at a time goes back to the kernel's read-around after it.
    if (base_ + pos_ >= populate_after_ && shard->on_disk()) shard->EndOnDisk();
    if (!first_read_ && (shard->skipped() || ids_only)) EndHold();  // no read to hold for
    if (shard->skipped()) {
      tally->skipped += run_end - p;
      p = run_end;
      continue;
    }
    if (ids_only) {
      for (; k < max && p < run_end; ++p) ids[k++] = ids_[p];
      continue;
    }
    const size_t g = run_at_.g();
    // The pass's first sample alone while the prefetcher holds (its shard
    // open, the read decodes it: a lazily opened Parquet group's pages);
    // then the hold ends, not at the call's end, so this batch may go on
    // into the shards the prefetcher then opens. A test once a run.
    const size_t read_end = first_read_ ? run_end : p + 1;
    for (; k < max && p < read_end; ++p) {
      if (p >= stop_at && k > 0 && shard->on_disk()) {
        stop = true;
        break;
      }
      const uint32_t i = run_at_.Local(ids_[p]);
      PrefetchAhead(p, p < stop_at ? std::min(ready, stop_at) : ready);
      SampleFields& fields = (*out)[k];
      fields.where = SampleLocation{g, i};
      fields.until_next_read = true;  // the batch's views end at the next NextBatch
      Status read = columns.Read(*shard, g, i, &fields);
      if (!read.ok()) {
        if (k == 0) *failure = std::move(read);
        stop = true;
        break;
      }
      ids[k] = ids_[p];
      bytes += fields.raw.size();
      ++k;
    }
    if (!first_read_) [[unlikely]] EndHold();
  }
  pos_ = p;  // a failing sample stays next: calling again fails again
  *k_io = k;
  handed_out_.store(base_ + pos_, std::memory_order_relaxed);
  tally->lead = ready > pos_ ? ready - pos_ : 0;
  if (prefetcher_) tally->lead_shards = prefetcher_->open_shards();
  tally->bytes += bytes;
  return stop;
}

Status IterationCursor::NextWindow(ConsumerWaits* waits) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<PassWindow> w;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(ahead_mu_);
      if (!ahead_.empty()) {
        w = std::move(ahead_.front());
        ahead_.pop_front();
        break;
      }
    }
    // The prefetcher has not asked for it yet: ask now.
    Status more = prefetcher_->Extend();
    if (!more.ok()) {
      waits->Add(start, std::chrono::steady_clock::now(), nullptr);
      return more.WithContext("the pass's window after position " + std::to_string(base_ + ids_.size()));
    }
  }
  waits->Add(start, std::chrono::steady_clock::now(), nullptr);
  base_ += ids_.size();
  InstallWindow(std::move(*w));
  return Status::Ok();
}

void IterationCursor::InstallWindow(PassWindow w) {
  ids_ = std::move(w.ids);
  shard_of_ = std::move(w.shard_of);
  last_window_ = w.last;
  pos_ = 0;
  prefetched_to_ = 0;
}

void IterationCursor::DropHeadOpen() {
  if (prefetcher_ && head_open_.valid() &&
      head_open_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    head_open_ = {};  // the prefetcher has its own open of the shard, or reports its failure
  }
}

Status IterationCursor::EndAfterFlight(ConsumerWaits* waits) {
  if (!last_flown_ || pos_ < ids_.size() || !last_window_ || ids_.empty() ||
      *last_flown_ != base_ + ids_.size() - 1) {
    return Status::Ok();
  }
  // Samples served in flight are not taken back, but the pass does not end
  // before the download they came from: its failure is this call's, and
  // the dataset's counters hold it once the pass is over.
  const size_t last = *std::exchange(last_flown_, std::nullopt);
  uint64_t waited_ns = 0;
  consumer_waiting_.store(true, std::memory_order_relaxed);
  Result<size_t> got = prefetcher_->Acquire(last, last, &waited_ns, /*wait=*/true);
  consumer_waiting_.store(false, std::memory_order_relaxed);
  TakeWait(waits);
  return got.status();
}

Result<bool> IterationCursor::FromFlight(size_t p, bool wait, const DatasetColumns& columns,
                                         int64_t* id, SampleFields* fields, ConsumerWaits* waits) {
  const size_t g = prefetcher_->shard_of(base_ + p);
  const uint32_t i = LocalOf(p, g);
  const auto start = std::chrono::steady_clock::now();
  bool blocked = false;
  SLUICE_ASSIGN_OR_RETURN(std::optional<PeekedSample> got,
                          shards_->ReadInFlight(g, i, wait, {}, &blocked));
  // A download wait only when the consumer waited for bytes to arrive.
  if (blocked) {
    waits->AddDownload(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - start)
                                                 .count()));
  }
  if (!got) return false;
  flown_.push_back(std::move(*got));
  last_flown_ = base_ + p;
  const PeekedSample& sample = flown_.back();
  fields->where = SampleLocation{g, i};
  fields->raw = sample.raw;
  fields->fields = sample.fields;
  fields->masked.clear();
  fields->pieced.clear();  // a read ahead's values are views of its own
  columns.LayOut(g, fields);
  *id = ids_[p];
  return true;
}

bool IterationCursor::FirstFromPeek(const DatasetColumns& columns, int64_t* ids,
                                    std::vector<SampleFields>* out, ConsumerWaits* waits) {
  const size_t g = first_shard_;
  const uint32_t i = LocalOf(0, g);
  if (!PeekFirst(g, i, waits)) return false;
  SampleFields& fields = (*out)[0];
  fields.where = SampleLocation{g, i};
  fields.raw = *peeked_->bytes;
  fields.fields = peeked_->fields;
  fields.masked.clear();
  fields.pieced.clear();  // a read ahead's values are views of its own
  columns.LayOut(g, &fields);
  ids[0] = ids_[0];
  pos_ = 1;
  EndHold();
  return true;
}

void IterationCursor::StartBehindPeek() {
  if (rest_) {
    StartRest();
  } else if (prefetcher_) {
    uint64_t waited_ns = 0;  // nothing: this Acquire does not wait
    // Starts the prefetch thread; a failure is the normal path's to report.
    (void)prefetcher_->Acquire(0, 0, &waited_ns, /*wait=*/false);
  }
}

bool IterationCursor::ShardInForPeek() {
  if (prefetcher_) {
    uint64_t waited_ns = 0;
    auto ready = prefetcher_->Acquire(0, 0, &waited_ns, /*wait=*/false);
    return !ready.ok() || *ready > 0;  // a failure: the normal path reports it
  }
  if (!head_open_.valid() ||
      head_open_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    return false;
  }
  // A failed open leaves the peek to finish (the prefetcher reports it).
  const auto& shard = head_open_.get();
  return shard.ok() && *shard;
}

bool IterationCursor::PeekFirst(size_t g, uint32_t i, ConsumerWaits* waits) {
  if (!shards_->Peekable(g)) {
    StartBehindPeek();
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  // Shared with the peek's thread, which may outlive this call.
  auto slot = std::make_shared<std::optional<PeekedSample>>();
  std::future<Status> peek;
  try {
    peek = std::async(std::launch::async, [this, g, i, slot,
                                           stop = peek_stop_.get_token()]() -> Status {
      try {
        SLUICE_ASSIGN_OR_RETURN(PeekedSample peeked, shards_->PeekSample(g, i, stop));
        slot->emplace(std::move(peeked));
        return Status::Ok();
      } catch (...) {
        return StatusFromException(std::current_exception(), "peeking the first sample");
      }
    });
  } catch (...) {
    StartBehindPeek();
    return false;  // no thread: the shard serves it
  }
  consumer_waiting_.store(true, std::memory_order_relaxed);
  // The head start: the peek alone on the link. Then whichever comes
  // first, the peek or the shard (polled: neither the prefetcher nor the
  // early open can wake a waiter on something else).
  bool shard_first = false;
  if (peek.wait_for(options_.peek_head_start) != std::future_status::ready) {
    StartBehindPeek();
    while (peek.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
      if (ShardInForPeek()) {
        shard_first = true;
        break;
      }
    }
  }
  consumer_waiting_.store(false, std::memory_order_relaxed);
  const auto waited_until = std::chrono::steady_clock::now();
  // Raced against the prefetcher's open, the shard's open says why when
  // the shard won; else the wait was a download (the peek's, or the
  // early open's: its timing is TakeRest's to add).
  const OpenedShard* won = shard_first && prefetcher_ ? prefetcher_->At(0) : nullptr;
  if (won != nullptr) {
    waits->Add(start, waited_until, &won->open_timing());
  } else {
    waits->AddDownload(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(waited_until - start).count()));
  }
  if (shard_first) {
    losing_peek_ = std::move(peek);
    return false;
  }
  Status peeked = peek.get();
  // A corruption no download heals (the store said the shard is not the
  // one the index describes: CorruptionMayHeal, the retries' own rule)
  // ends the pass here: its shard would only fail the same way.
  if (IsCorruption(peeked) && !CorruptionMayHeal(peeked)) {
    failed_ = peeked.WithContext("peeking global shard " + std::to_string(g) + " sample " +
                                 std::to_string(i) + ", the pass's first");
    return false;
  }
  // The shard (and the rest's plan) go on while the consumer has the sample.
  StartBehindPeek();
  if (!peeked.ok()) return false;  // the shard serves it
  peeked_ = std::move(*slot);
  return true;
}

void IterationCursor::TakeWait(ConsumerWaits* waits) {
  if (auto w = prefetcher_->TakeLastWait()) {
    waits->Add(w->start, w->end, w->shard != nullptr ? &w->shard->open_timing() : nullptr);
  }
}

Status IterationCursor::CheckPeeked(const DatasetColumns& columns, ConsumerWaits* waits) {
  if (!prefetcher_) SLUICE_RETURN_IF_ERROR(TakeRest(waits));
  const size_t g = prefetcher_->shard_of(0);
  const uint32_t i = LocalOf(0, g);
  uint64_t waited_ns = 0;
  auto acquired = prefetcher_->Acquire(0, 0, &waited_ns, /*wait=*/true);
  TakeWait(waits);
  SLUICE_ASSIGN_OR_RETURN(size_t ready, std::move(acquired));
  (void)ready;  // position 0 is ready: Acquire waited for it or failed
  const OpenedShard* shard = prefetcher_->At(0);
  SampleFields read;
  Status st = shard->skipped() ? CorruptError("the shard was skipped") : columns.Read(*shard, g, i, &read);
  if (st.ok() && read.raw != *peeked_->bytes) {
    st = CorruptError("its " + std::to_string(read.raw.size()) +
                      " bytes differ from the " + std::to_string(peeked_->bytes->size()) +
                      " bytes read ahead of the shard (the object changed?)");
  }
  // A Parquet row has no raw bytes: its values are compared.
  if (st.ok() && read.raw.empty()) {
    SampleFields peeked;
    peeked.fields = peeked_->fields;
    columns.LayOut(g, &peeked);
    for (size_t c = 0; c < read.fields.size() && st.ok(); ++c) {
      const std::string_view a = read.fields[c];
      const std::string_view b = c < peeked.fields.size() ? peeked.fields[c] : std::string_view();
      if (a != b || (a.data() == nullptr) != (b.data() == nullptr)) {
        st = CorruptError("its field " + std::to_string(c) +
                          " differs from the value read ahead of the shard (the object changed?)");
      }
    }
  }
  shards_->PeekDone(g);
  if (!st.ok()) {
    return st.WithContext("global shard " + std::to_string(g) + " sample " + std::to_string(i) +
                          ", the pass's first, was peeked");
  }
  peeked_.reset();
  return Status::Ok();
}

}  // namespace sluice

#include "engine/dataset/streaming_dataset.h"

#include <unistd.h>

#include <algorithm>

#include "base/file.h"
#include "engine/dataset/cache_budget.h"
#include "engine/dataset/stream_index.h"
#include "formats/dataset/format_descriptor.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxSamples = uint64_t{1} << 48;

}  // namespace

Result<std::unique_ptr<StreamingDataset>> StreamingDataset::Open(DatasetOptions options) {
  std::unique_ptr<StreamingDataset> d(new StreamingDataset());
  SLUICE_ASSIGN_OR_RETURN(d->world_, ResolveWorld(options.world));
  d->options_ = std::move(options);
  std::vector<uint64_t> starts{0};
  std::vector<std::string> names, encodings;
  for (size_t s = 0; s < d->options_.streams.size(); ++s) {
    const StreamOptions& stream = d->options_.streams[s];
    std::string where = "stream " + std::to_string(s) + " (" + StreamRoot(stream) + ")";
    std::shared_ptr<RemoteSource> remote;
    if (!stream.remote.empty()) {
      StoreOptions store_options;
      store_options.download_retry = stream.download_retry;
      store_options.download_timeout_s = stream.download_timeout_s;
      store_options.read_timeout_s = stream.read_timeout_s;
      auto opened = OpenRemoteSource(stream.remote, store_options);
      if (!opened.ok()) return opened.status().WithContext(where);
      remote = std::move(*opened);
    }
    auto index = LoadStreamIndex(stream, remote.get(), d->options_.wait_timeout);
    if (!index.ok()) return index.status().WithContext(where);
    d->stream_first_shard_.push_back(starts.size() - 1);
    for (size_t i = 0; i < index->shards.size(); ++i) {
      const ShardEntry& e = index->shards[i];
      std::string shard_where = where + ": shard " + std::to_string(i) + " (" + e.raw_data.basename + ")";
      SLUICE_RETURN_IF_ERROR(ColumnsOf(e, &names, &encodings).WithContext(shard_where));
      if (d->column_names_.empty() && s == 0 && i == 0) {
        d->column_names_ = names;
        d->column_encodings_ = encodings;
        d->format_ = e.format;
      } else if (names != d->column_names_ || encodings != d->column_encodings_) {
        return CorruptError(shard_where + ": its columns differ from stream 0 shard 0's");
      } else if (e.format != d->format_) {
        // A field's bytes mean what its format says (an MDS int is 8 bytes,
        // a JSONL one JSON text): one format per dataset, so a binding
        // decodes every sample alike.
        return InvalidArgumentError(shard_where + ": its format '" + e.format +
                                    "' differs from stream 0 shard 0's '" + d->format_ + "'");
      }
      uint64_t next = starts.back() + e.samples;
      if (next > kMaxSamples) return CorruptError(shard_where + ": total samples exceed 2^48");
      starts.push_back(next);
    }
    d->indexes_.push_back(std::make_unique<Index>(std::move(*index)));
    d->remotes_.push_back(std::move(remote));
  }
  d->stream_first_shard_.push_back(starts.size() - 1);
  d->locator_ = SampleLocator(std::move(starts));
  SLUICE_RETURN_IF_ERROR(d->CheckCacheLimit());
  // Mosaic refuses pickled columns (arbitrary code on decode) unless asked.
  for (size_t c = 0; c < d->column_encodings_.size() && !d->options_.allow_unsafe_types; ++c) {
    if (d->column_encodings_[c] == "pkl") {
      // Mosaic's text (users match it).
      return InvalidArgumentError("ValueError: Column " + d->column_names_[c] +
                                  " contains an unsafe type: pkl. To proceed anyway, set "
                                  "``allow_unsafe_types=True``.");
    }
  }
  if (!d->options_.plan.batch_size) d->options_.plan.batch_size = 1;
  SLUICE_ASSIGN_OR_RETURN(planner::PlanDerived derived, planner::DerivePlan(d->Request(0, 0, 1)));
  d->epoch_size_ = derived.weighting.epoch_size;
  d->num_canonical_nodes_ = derived.num_canonical_nodes;
  // Mosaic counts nodes and ranks in its replicated world (replication
  // merges groups of ranks): the first run's nodes and len() come from it.
  d->parallel_nodes_ = derived.parallel_world.num_nodes;
  d->parallel_ranks_ = derived.parallel_world.num_nodes * derived.parallel_world.ranks_per_node;
  d->initial_physical_nodes_ = d->parallel_nodes_;
  return d;
}

Status StreamingDataset::CheckCacheLimit() {
  stream_limits_.assign(indexes_.size(), std::nullopt);
  if (!options_.cache_limit) return Status::Ok();
  const uint64_t limit = *options_.cache_limit;
  std::vector<StreamBudget> budgets(indexes_.size());
  for (size_t s = 0; s < indexes_.size(); ++s) {
    const StreamOptions& stream = options_.streams[s];
    if (!remotes_[s]) continue;  // read in place: nothing is cached
    WorkingSet ws = MinimalWorkingSet(*indexes_[s], stream.keep_zip);
    budgets[s] = StreamBudget{true, StreamKeptBytes(*indexes_[s], stream.keep_zip), ws,
                              "stream " + std::to_string(s) + " (" + StreamRoot(stream) + ")"};
    if (limit < ws.bytes) {
      return InvalidArgumentError(
          "cache_limit " + std::to_string(limit) + " bytes cannot hold what one reader of stream " +
          std::to_string(s) + " (" + StreamRoot(stream) + ") needs at once: " +
          std::to_string(ws.bytes) + " bytes for " +
          DescribeWorkingSet(*indexes_[s], ws.shard, stream.keep_zip) +
          "; raise cache_limit to at least " + std::to_string(ws.bytes) + " bytes");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(stream_limits_, SplitCacheLimit(limit, budgets));
  return Status::Ok();
}

StreamingDataset::~StreamingDataset() {
  if (pid_ != 0 && pid_ != ::getpid()) {
    // A forked copy: the parent's prefetch thread does not exist here and its
    // caches are the parent's. Abandon them untouched.
    held_.clear();
    (void)iter_.release();
    for (auto& s : streams_) (void)s.release();
  }
  held_.clear();
  iter_.reset();
}

size_t StreamingDataset::stream_of_shard(size_t g) const {
  auto it = std::upper_bound(stream_first_shard_.begin(), stream_first_shard_.end(), g);
  return static_cast<size_t>(it - stream_first_shard_.begin()) - 1;
}

uint64_t StreamingDataset::shard_samples(size_t g) const {
  const size_t s = stream_of_shard(g);
  return indexes_[s]->shards[g - stream_first_shard_[s]].samples;
}

int64_t StreamingDataset::length() const {
  return (epoch_size_ + parallel_ranks_ - 1) / parallel_ranks_;
}

planner::PlanRequest StreamingDataset::Request(int64_t epoch, int64_t sample_in_epoch,
                                               int64_t num_workers) const {
  planner::PlanRequest r;
  r.config = options_.plan;
  // Unset while Open derives the plan, and when it equals this run's nodes
  // (the default); set after a resume from a run on other nodes.
  if (initial_physical_nodes_ > 0 && initial_physical_nodes_ != parallel_nodes_) {
    r.config.initial_physical_nodes = initial_physical_nodes_;
  }
  for (size_t s = 0; s < indexes_.size(); ++s) {
    planner::StreamSpec spec;
    for (const ShardEntry& e : indexes_[s]->shards) spec.shard_sizes.push_back(static_cast<int64_t>(e.samples));
    spec.weight = options_.streams[s].weight;
    r.streams.push_back(std::move(spec));
  }
  r.world.num_nodes = world_.num_nodes;
  r.world.ranks_per_node = world_.ranks_per_node;
  r.world.workers_per_rank = num_workers;
  r.epoch = epoch;
  r.sample_in_epoch = sample_in_epoch;
  return r;
}

Status StreamingDataset::EnsureProcess() {
  pid_t me = ::getpid();
  if (pid_ == me) return Status::Ok();
  if (pid_ != 0) {
    // Forked after reading: leave the parent's objects alone (see ~).
    (void)new std::vector<std::shared_ptr<const OpenedShard>>(std::move(held_));
    held_.clear();
    get_shard_ = SIZE_MAX;
    (void)iter_.release();
    for (auto& s : streams_) (void)s.release();
    streams_.clear();
  }
  pid_ = me;
  for (size_t s = 0; s < indexes_.size(); ++s) {
    auto shards = StreamShards::Open(options_.streams[s], indexes_[s].get(), remotes_[s],
                                     stream_limits_[s], options_.wait_timeout);
    if (!shards.ok()) {
      streams_.clear();
      pid_ = 0;
      return shards.status().WithContext("stream " + std::to_string(s));
    }
    streams_.push_back(std::move(*shards));
  }
  return Status::Ok();
}

std::pair<size_t, uint32_t> StreamingDataset::Locate(uint64_t id) const {
  return locator_.Locate(id);
}

Result<std::shared_ptr<const OpenedShard>> StreamingDataset::OpenGlobalShard(
    size_t g, const std::atomic<bool>* cancel) {
  const size_t s = stream_of_shard(g);
  if (options_.skip_corrupt_shards || options_.skip_missing_files) {
    std::lock_guard<std::mutex> lock(skipped_mu_);
    if (skipped_.count(g)) return OpenedShard::Skipped();
  }
  auto shard = streams_[s]->OpenShard(g - stream_first_shard_[s], column_names_.size(), cancel);
  if (!shard.ok()) {
    if (Skippable(s, shard.status())) {
      std::lock_guard<std::mutex> lock(skipped_mu_);
      skipped_.insert(g);
      return OpenedShard::Skipped();
    }
    return shard.status();
  }
  return std::shared_ptr<const OpenedShard>(std::move(*shard));
}

bool StreamingDataset::Skippable(size_t stream, const Status& s) const {
  if (options_.skip_corrupt_shards && IsCorruption(s)) return true;
  if (!options_.skip_missing_files || !options_.streams[stream].files) return false;
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kPermissionDenied ||
         s.code() == StatusCode::kCorrupt;
}

size_t StreamingDataset::OpenThreads() const {
  if (options_.cache_limit) return 1;
  if (options_.fetch_concurrency) return static_cast<size_t>(*options_.fetch_concurrency);
  for (const StreamOptions& s : options_.streams) {
    if (s.files) return kRawFileFetchConcurrency;
  }
  return kShardFetchConcurrency;
}

std::string StreamingDataset::shard_path(size_t g) const {
  const size_t s = stream_of_shard(g);
  return JoinPath(StreamRoot(options_.streams[s]),
                  indexes_[s]->shards[g - stream_first_shard_[s]].raw_data.basename);
}

Status StreamingDataset::Get(uint64_t id, SampleFields* out) {
  if (id >= num_samples()) {
    return OutOfRangeError("sample " + std::to_string(id) + " is past the end (the dataset has " +
                           std::to_string(num_samples()) + " samples)");
  }
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  auto [g, i] = Locate(id);
  std::shared_ptr<const OpenedShard> shard;
  // Reuse the shard of the previous Get when it is the same one.
  if (get_shard_ == g && held_.size() == 1) shard = held_[0];
  if (!shard) {
    held_.clear();
    auto start = std::chrono::steady_clock::now();
    SLUICE_ASSIGN_OR_RETURN(shard, OpenGlobalShard(g));
    wait_ns_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now() - start)
                                          .count());
    if (shard->skipped()) {
      return CorruptError("sample " + std::to_string(id) + ": its shard " + std::to_string(g) +
                          " (" + shard_path(g) + ") was skipped as corrupt or unreadable" +
                          " (skip_corrupt_shards, skip_missing_files)");
    }
    held_.assign(1, shard);
    get_shard_ = g;
  }
  out->where = SampleLocation{g, i};
  return shard->Read(i, column_names_, out);
}

Result<std::vector<int64_t>> StreamingDataset::WorkerIds(int64_t epoch, int64_t sample_in_epoch,
                                                         int64_t worker, int64_t num_workers) const {
  if (num_workers < 1 || worker < 0 || worker >= num_workers) {
    return InvalidArgumentError("worker " + std::to_string(worker) + " of " +
                                std::to_string(num_workers) + ": need 0 <= worker < num_workers");
  }
  if (epoch < 0 || sample_in_epoch < 0) {
    return InvalidArgumentError("epoch and sample_in_epoch must not be negative");
  }
  return planner::PlanWorker(Request(epoch, sample_in_epoch, num_workers), world_.node,
                             world_.rank_in_node, worker);
}

Status StreamingDataset::IterBegin(int64_t epoch, int64_t sample_in_epoch, int64_t worker,
                                   int64_t num_workers) {
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  // The previous iteration may have planned and opened this one's start.
  ShardPrefetcher::ShardMap seed;
  std::vector<int64_t> ids;
  bool planned = false;
  if (iter_) {
    seed = iter_->StopAndTakeNext();
    if (next_ids_ && sample_in_epoch == 0 && epoch == iter_epoch_ + 1 && worker == iter_worker_ &&
        num_workers == iter_workers_) {
      ids = std::move(*next_ids_);
      planned = true;
    }
  }
  next_ids_.reset();
  Release();
  iter_.reset();
  if (!planned) {
    SLUICE_ASSIGN_OR_RETURN(ids, WorkerIds(epoch, sample_in_epoch, worker, num_workers));
  }
  std::vector<size_t> shard_of;
  shard_of.reserve(ids.size());
  iter_local_.clear();
  iter_local_.reserve(ids.size());
  for (int64_t id : ids) {
    auto [g, i] = Locate(static_cast<uint64_t>(id));
    shard_of.push_back(g);
    iter_local_.push_back(i);
  }
  iter_ids_ = std::move(ids);
  iter_pos_ = 0;
  iter_epoch_ = epoch;
  iter_start_ = sample_in_epoch;
  iter_worker_ = worker;
  iter_workers_ = num_workers;
  // Never more than the epoch (so window arithmetic cannot overflow).
  size_t window = static_cast<size_t>(std::clamp<int64_t>(
      options_.predownload_samples(), 1, static_cast<int64_t>(iter_ids_.size()) + 1));
  // Runs on the prefetch thread near the end of this epoch; next_ids_ is read
  // only after that thread is joined (StopAndTakeNext above).
  auto next = [this, epoch, worker, num_workers]() -> Result<std::vector<size_t>> {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, WorkerIds(epoch + 1, 0, worker, num_workers));
    std::vector<size_t> order;
    order.reserve(ids.size());
    for (int64_t id : ids) order.push_back(Locate(static_cast<uint64_t>(id)).first);
    next_ids_ = std::move(ids);
    return order;
  };
  iter_ = std::make_unique<ShardPrefetcher>(
      std::move(shard_of), window,
      [this](size_t g, const std::atomic<bool>* cancel) {
        auto shard = OpenGlobalShard(g, cancel);
        // Page faults here rather than in the consumer, for shards opened
        // ahead. A consumer already waiting needs one sample of the shard,
        // not all its pages: faulting in a whole 64 MiB shard costs
        // milliseconds, and a shuffled first batch (a resumption, a new
        // epoch) waits on a dozen shards in a row.
        if (shard.ok() && !consumer_waiting_.load(std::memory_order_relaxed)) (*shard)->Populate();
        return shard;
      },
      options_.prefetch_next_epoch ? ShardPrefetcher::NextOrder(std::move(next)) : nullptr,
      std::move(seed), /*keep_reused=*/!options_.cache_limit.has_value(), OpenThreads());
  return Status::Ok();
}

Result<size_t> StreamingDataset::NextBatch(size_t max, int64_t* ids, std::vector<SampleFields>* out) {
  if (!iter_) return InvalidArgumentError("NextBatch before IterBegin");
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  if (!iter_) return InvalidArgumentError("NextBatch in a forked process: call IterBegin there");
  const size_t end = iter_ids_.size();
  if (out->size() < std::min(max, end - iter_pos_)) out->resize(std::min(max, end - iter_pos_));
  // The last call's views end here; the next Acquire lets the prefetcher
  // drop the shards behind this call's first position.
  Release();
  // `from`: this call's first position that yields a sample (skipped
  // samples before it need no shard kept).
  size_t k = 0, p = iter_pos_, from = iter_pos_, ready = iter_pos_;
  uint64_t skipped = 0;
  Status failure = Status::Ok();
  for (; k < max && p < end; ++p) {
    if (p >= ready) {
      // Wait only for the call's first sample; the caller gets a shorter
      // batch rather than wait for the rest. Cold and shuffled, a batch's
      // samples lie in as many shards as it has samples, and waiting for
      // them all held the first sample back until most of a window had
      // downloaded. Under a cache_limit, waiting while this call's samples
      // pin shards could also need more room than one reader's working set
      // (see cache_budget.h). Warm, the prefetcher is a window ahead and
      // batches come back full.
      if (k == 0) from = p;
      if (k == 0) consumer_waiting_.store(true, std::memory_order_relaxed);
      auto got = iter_->Acquire(from, p, &wait_ns_, /*wait=*/k == 0);
      if (k == 0) consumer_waiting_.store(false, std::memory_order_relaxed);
      if (!got.ok()) {
        if (k == 0) failure = got.status();  // else the next call reports it
        break;
      }
      ready = *got;
      if (ready <= p) break;
    }
    const OpenedShard* shard = iter_->At(p);
    if (shard->skipped()) {
      ++skipped;
      continue;
    }
    const uint32_t i = iter_local_[p];
    PrefetchAhead(p, ready);
    (*out)[k].where = SampleLocation{iter_->shard_of(p), i};
    Status read = shard->Read(i, column_names_, &(*out)[k]);
    if (!read.ok()) {
      if (k == 0) failure = std::move(read);
      break;
    }
    ids[k] = iter_ids_[p];
    ++k;
  }
  iter_pos_ = p;  // a failing sample stays next: calling again fails again
  samples_skipped_ += skipped;
  get_shard_ = SIZE_MAX;
  if (!failure.ok()) return failure;
  return k;
}

void StreamingDataset::PrefetchAhead(size_t p, size_t ready) {
  // Shuffled reads miss the CPU cache. Two stages, so that neither waits on
  // memory: the offset entry of the sample 2 * kAhead positions on, then the
  // bytes of the one kAhead on (its entry loaded by the first stage). A run
  // of consecutive ids needs no help (the hardware prefetcher sees it).
  constexpr size_t kAhead = 16;
  if (size_t q = p + 2 * kAhead; q < ready && iter_ids_[q] != iter_ids_[p] + int64_t{2 * kAhead}) {
    iter_->At(q)->PrefetchOffsets(iter_local_[q]);
  }
  if (size_t q = p + kAhead; q < ready && iter_ids_[q] != iter_ids_[p] + int64_t{kAhead}) {
    iter_->At(q)->Prefetch(iter_local_[q]);
  }
}

ResumeState StreamingDataset::State(uint64_t rank_samples) const {
  ResumeState s;
  s.epoch = iter_epoch_;
  // Replicas read the same samples: the job consumed rank_samples per
  // group of replicas (Mosaic: yielded * ranks // replication).
  s.sample_in_epoch = iter_start_ + static_cast<int64_t>(rank_samples) * parallel_ranks_;
  s.num_canonical_nodes = num_canonical_nodes_;
  s.shuffle_seed = options_.plan.shuffle_seed;
  s.initial_physical_nodes = initial_physical_nodes_;
  return s;
}

Status StreamingDataset::LoadState(const ResumeState& state) {
  if (state.num_canonical_nodes < 1) {
    return InvalidArgumentError("resume state: num_canonical_nodes must be positive");
  }
  // The prefetch thread reads the planning options: stop the iteration.
  Release();
  iter_.reset();
  next_ids_.reset();
  iter_ids_.clear();
  iter_pos_ = 0;
  DatasetOptions saved = options_;
  int64_t saved_ipn = initial_physical_nodes_;
  options_.plan.num_canonical_nodes = state.num_canonical_nodes;
  options_.plan.shuffle_seed = state.shuffle_seed;
  if (state.initial_physical_nodes > 0) initial_physical_nodes_ = state.initial_physical_nodes;
  auto derived = planner::DerivePlan(Request(state.epoch, state.sample_in_epoch, 1));
  if (!derived.ok()) {
    options_ = std::move(saved);
    initial_physical_nodes_ = saved_ipn;
    return derived.status().WithContext("resume state");
  }
  num_canonical_nodes_ = derived->num_canonical_nodes;
  iter_epoch_ = state.epoch;
  iter_start_ = state.sample_in_epoch;
  return Status::Ok();
}

DatasetCounters StreamingDataset::counters() const {
  DatasetCounters c;
  c.consumer_wait_ns = wait_ns_;
  c.samples_skipped = samples_skipped_;
  {
    std::lock_guard<std::mutex> lock(skipped_mu_);
    c.shards_skipped = skipped_.size();
  }
  if (pid_ != ::getpid()) return c;
  for (const auto& s : streams_) {
    CacheCounters cc = s->cache_counters();
    c.bytes_downloaded += s->bytes_downloaded();
    c.shards_downloaded += cc.shards_fetched;
    c.shards_evicted += cc.shards_evicted;
    c.cache_hits += cc.cache_hits;
  }
  return c;
}

}  // namespace sluice

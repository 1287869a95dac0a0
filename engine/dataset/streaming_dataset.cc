#include "engine/dataset/streaming_dataset.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <unordered_map>

#include "base/file.h"
#include "engine/dataset/cache_budget.h"
#include "engine/dataset/node_metrics.h"
#include "stores/http/host_stats.h"
#include "stores/http/url.h"
#include "engine/dataset/stream_index.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/size_check.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/mds/column_encoding.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxSamples = uint64_t{1} << 48;

// The coarse monotonic clock (a read of the vDSO's page, no syscall), ns:
// Next compares it with the next record's time once per batch.
uint64_t CoarseNowNs() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

uint64_t MinOrZero(const std::atomic<uint64_t>& a) {
  const uint64_t v = a.load(std::memory_order_relaxed);
  return v == UINT64_MAX ? 0 : v;
}

// The remote of `stream` (null when it has none), with its download options.
Result<std::shared_ptr<RemoteSource>> OpenStreamRemote(const StreamOptions& stream, Env* env) {
  if (!stream.has_remote()) return std::shared_ptr<RemoteSource>();
  StoreOptions store_options;
  store_options.env = env;
  store_options.download_retry = stream.download_retry;
  store_options.download_timeout_s = stream.download_timeout_s;
  store_options.read_timeout_s = stream.read_timeout_s;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RemoteSource> remote,
                          OpenRemoteSource(stream.remote, store_options));
  return std::shared_ptr<RemoteSource>(std::move(remote));
}

}  // namespace

// A sequence of named steps (streaming_dataset.h says what each does).
Result<std::unique_ptr<StreamingDataset>> StreamingDataset::Open(DatasetOptions options) {
  std::unique_ptr<StreamingDataset> d(new StreamingDataset());
  // Its records count the HTTP requests from here on (its index's too).
  d->RebaseHostCounts();
  SLUICE_ASSIGN_OR_RETURN(d->world_, ResolveWorld(options.world));
  d->options_ = std::move(options);
  StreamsInOpening opening;
  for (size_t s = 0; s < d->options_.streams.size(); ++s) {
    SLUICE_RETURN_IF_ERROR(d->AddStream(s, &opening));
  }
  d->NumberSamples(std::move(opening.starts));
  d->SummarizeFormatsAndEncodings(opening.own_encodings);
  SLUICE_RETURN_IF_ERROR(d->CheckCacheLimit());
  SLUICE_RETURN_IF_ERROR(d->RefuseUnsafeTypes());
  SLUICE_RETURN_IF_ERROR(d->DerivePlan());
  d->worlds_ = {WorldShape{d->world_.num_nodes, d->world_.ranks_per_node}};
  d->instance_ = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return d;
}

Status StreamingDataset::AddStream(size_t s, StreamsInOpening* opening) {
  // Every later reader of the stream's options takes this flag as it is.
  options_.streams[s].single_pass = ReadsInSinglePass(options_.streams[s]);
  const StreamOptions& stream = options_.streams[s];
  const std::string where = "stream " + std::to_string(s) + " (" + StreamRoot(stream) + ")";
  auto remote = OpenStreamRemote(stream, options_.env);
  if (!remote.ok()) return remote.status().WithContext(where);
  uint64_t index_json_bytes = 0;
  std::unique_ptr<GuessedHead> guessed;
  std::unique_ptr<GuessedPieceHead> guessed_piece;
  const bool guesses = GuessesFirstShard(s);
  auto index = LoadStreamIndex(stream, remote->get(), options_.wait_timeout, &index_json_bytes,
                               options_.binary_index_from_bytes, options_.env,
                               guesses ? &guessed : nullptr, guesses ? &guessed_piece : nullptr);
  if (!index.ok()) return planner::WithContextUnlessMosaic(index.status(), where);
  // Another first shard, or one the peek cannot read: the guess is dropped
  // now (its read stopped), not held for the dataset's life.
  if (guessed && (index->empty() || index->entry(0).raw_data.basename != GuessedFirstShard() ||
                  !SamplePeekable(index->entry(0)))) {
    guessed.reset();
  }
  if (guessed_piece && (index->empty() || !index->entry(0).piece ||
                        index->entry(0).piece->file != guessed_piece->file())) {
    guessed_piece.reset();
  }
  guessed_heads_.push_back(std::move(guessed));
  guessed_pieces_.push_back(std::move(guessed_piece));
  SLUICE_RETURN_IF_ERROR(AddStreamShards(s, *index, where, opening));
  index_fingerprints_.emplace_back();  // made when first asked (Order)
  indexes_.push_back(std::make_shared<const ShardTable>(std::move(*index)));
  index_json_bytes_.push_back(index_json_bytes);
  remotes_.push_back(std::move(*remote));
  return Status::Ok();
}

bool StreamingDataset::GuessesFirstShard(size_t s) const {
  return s == 0 && world_.global_rank == 0 && !options_.plan.shuffle &&
         options_.peek_first_sample && options_.guess_first_shard;
}

Status StreamingDataset::AddStreamShards(size_t s, const ShardTable& index,
                                         const std::string& where, StreamsInOpening* opening) {
  std::vector<uint64_t>& starts = opening->starts;
  std::vector<std::vector<std::string>>& own_encodings = opening->own_encodings;
  stream_first_shard_.push_back(starts.size() - 1);
  stream_formats_.emplace_back();  // set by its first shard
  stream_encodings_.emplace_back();
  // Columns are a configuration's: each distinct one is read once
  // (checked[c]), and a shard whose configuration is shard 0's is like it.
  std::vector<char> checked(index.num_configs(), 0);
  auto shard_where = [&](size_t i) {
    return where + ": shard " + std::to_string(i) + " (" +
           std::string(index.ref(i).raw_data.basename) + ")";
  };
  std::vector<std::string> names, encodings;
  starts.reserve(starts.size() + index.size());
  for (size_t i = 0; i < index.size(); ++i) {
    const uint32_t c = index.config_id(i);
    if (!checked[c]) {
      checked[c] = 1;
      const ShardEntry& config = index.config(i);
      if (!ColumnsOf(config, options_.custom_encodings, &names, &encodings).ok()) {
        // The error as the whole entry words it (some name its file).
        return ColumnsOf(index.entry(i), options_.custom_encodings, &names, &encodings)
            .WithContext(shard_where(i));
      }
      if (i == 0) {
        // Streams may differ in format, encodings and column names, as
        // Mosaic's do (it decodes each shard by its own): DatasetColumns
        // lays every sample out by the dataset's columns.
        SLUICE_RETURN_IF_ERROR(columns_.AddStream(names).WithContext(shard_where(i)));
        stream_formats_[s] = config.format;
        own_encodings.push_back(encodings);
      } else if (names != columns_.stream_names(s) || encodings != own_encodings[s]) {
        return CorruptError(shard_where(i) + ": its columns differ from shard 0's of its stream");
      } else if (config.format != stream_formats_[s]) {
        // A field's bytes mean what its format says (an MDS int is 8 bytes,
        // a JSONL one JSON text): one format per stream, so a binding
        // decodes every sample of a stream alike.
        return InvalidArgumentError(shard_where(i) + ": its format '" + config.format +
                                    "' differs from shard 0's '" + stream_formats_[s] +
                                    "' of its stream");
      }
    }
    uint64_t next = starts.back() + index.samples(i);
    if (next > kMaxSamples) return CorruptError(shard_where(i) + ": total samples exceed 2^48");
    starts.push_back(next);
  }
  if (index.empty()) {
    SLUICE_RETURN_IF_ERROR(columns_.AddStream({}));
    own_encodings.emplace_back();
  }
  return Status::Ok();
}

void StreamingDataset::NumberSamples(std::vector<uint64_t> starts) {
  stream_first_shard_.push_back(starts.size() - 1);
  locator_ = std::make_shared<const SampleLocator>(std::move(starts));
  columns_.SetStreamFirstShards(stream_first_shard_);
}

void StreamingDataset::SummarizeFormatsAndEncodings(
    const std::vector<std::vector<std::string>>& own_encodings) {
  // Each stream's encodings by the dataset's columns ("" where it lacks
  // one), and what the streams with shards share: kMixed where they differ
  // or one lacks the column.
  const size_t num_columns = columns_.names().size();
  bool first = true;
  for (size_t s = 0; s < stream_formats_.size(); ++s) {
    std::vector<std::string>& mine = stream_encodings_[s];
    if (stream_formats_[s].empty()) continue;  // no shards: no encodings
    mine.assign(num_columns, "");
    const std::vector<uint32_t>& columns = columns_.stream_columns(s);
    for (size_t k = 0; k < columns.size(); ++k) mine[columns[k]] = own_encodings[s][k];
    if (first) {
      format_ = stream_formats_[s];
      column_encodings_ = mine;
      first = false;
      continue;
    }
    if (stream_formats_[s] != format_) format_ = kMixed;
    for (size_t c = 0; c < num_columns; ++c) {
      if (mine[c] != column_encodings_[c]) column_encodings_[c] = kMixed;
    }
  }
  for (std::string& encoding : column_encodings_) {
    if (encoding.empty()) encoding = kMixed;  // the first stream lacks it, another has it
  }
}

Status StreamingDataset::RefuseUnsafeTypes() const {
  // Mosaic refuses pickled columns (arbitrary code on decode) unless asked.
  if (options_.allow_unsafe_types) return Status::Ok();
  for (const std::vector<std::string>& encodings : stream_encodings_) {
    for (size_t c = 0; c < encodings.size(); ++c) {
      if (IsUnsafeEncoding(encodings[c])) {
        return planner::MosaicValueError(UnsafeEncodingMessage(columns_.names()[c], encodings[c]));
      }
    }
  }
  return Status::Ok();
}

Status StreamingDataset::DerivePlan() {
  if (!options_.plan.batch_size) options_.plan.batch_size = 1;
  SLUICE_ASSIGN_OR_RETURN(planner::PlanDerived derived, planner::DerivePlan(Request(0, 0, 1)));
  epoch_size_ = derived.weighting.epoch_size;
  num_canonical_nodes_ = derived.num_canonical_nodes;
  // Mosaic counts nodes and ranks in its replicated world (replication
  // merges groups of ranks): the first run's nodes and len() come from it.
  parallel_nodes_ = derived.parallel_world.num_nodes;
  parallel_ranks_ = derived.parallel_world.num_nodes * derived.parallel_world.ranks_per_node;
  initial_physical_nodes_ = parallel_nodes_;
  return Status::Ok();
}

Status StreamingDataset::CheckCacheLimit() {
  stream_limits_.assign(indexes_.size(), std::nullopt);
  if (!options_.cache_limit) return Status::Ok();
  const uint64_t limit = *options_.cache_limit;
  if (options_.mosaic_cache_limit_checks) {
    // Mosaic's checks first, over the streams that have an index.json.
    uint64_t index_bytes = 0;
    std::vector<const ShardTable*> mosaic_indexes;
    for (size_t s = 0; s < indexes_.size(); ++s) {
      // A single pass caches none of its shards (AddStream: only a stream
      // with a remote has the flag).
      if (index_json_bytes_[s] == 0 || options_.streams[s].single_pass) continue;
      index_bytes += index_json_bytes_[s];
      mosaic_indexes.push_back(indexes_[s].get());
    }
    SLUICE_RETURN_IF_ERROR(CheckMosaicCacheLimit(limit, index_bytes, mosaic_indexes));
  }
  std::vector<StreamBudget> budgets(indexes_.size());
  for (size_t s = 0; s < indexes_.size(); ++s) {
    const StreamOptions& stream = options_.streams[s];
    // Read in place, or a single pass (received into memory): nothing is cached.
    if (!remotes_[s] || stream.single_pass) continue;
    WorkingSet ws = MinimalWorkingSet(*indexes_[s], stream.keep_zip);
    budgets[s] = StreamBudget{true, StreamWholeBytes(*indexes_[s], stream.keep_zip), ws,
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
  // A process that read keeps its last counts in the node's sum.
  if (pid_ == ::getpid() && (consumer_.batches.load(std::memory_order_relaxed) > 0 ||
                             consumer_.samples.load(std::memory_order_relaxed) > 0)) {
    (void)PublishMetrics();
  }
  if (pid_ != 0 && pid_ != ::getpid()) {
    // A forked copy: the parent's prefetch thread does not exist here and its
    // caches are the parent's. Abandon them untouched.
    held_.clear();
    (void)cursor_.release();
    (void)shards_.release();
  }
  held_.clear();
  cursor_.reset();
}

size_t StreamingDataset::stream_of_shard(size_t g) const {
  return StreamOfShard(stream_first_shard_, g);
}

uint64_t StreamingDataset::shard_samples(size_t g) const {
  const size_t s = stream_of_shard(g);
  return indexes_[s]->samples(g - stream_first_shard_[s]);
}

ShardEntry StreamingDataset::shard_entry(size_t g) const {
  const size_t s = stream_of_shard(g);
  return indexes_[s]->entry(g - stream_first_shard_[s]);
}

int64_t StreamingDataset::length() const {
  return (epoch_size_ + parallel_ranks_ - 1) / parallel_ranks_;
}

NodeCheckpointsPlace StreamingDataset::CheckpointsPlace() const {
  return NodeCheckpointsPlace{StreamRoot(options_.streams.at(0)), options_.wait_timeout, options_.env};
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
    const ShardTable& index = *indexes_[s];
    spec.shard_sizes.reserve(index.size());
    for (size_t i = 0; i < index.size(); ++i) {
      spec.shard_sizes.push_back(static_cast<int64_t>(index.samples(i)));
    }
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
  {
    // A process forked before anyone read counts its requests from here
    // (those before are its parent's, in its parent's record).
    std::lock_guard<std::mutex> lock(node_mu_);
    if (host_base_pid_ != me) RebaseHostCountsLocked();
  }
  if (pid_ != 0) {
    // Forked after reading: leave the parent's objects alone (see ~).
    (void)new std::vector<std::shared_ptr<const OpenedShard>>(std::move(held_));
    held_.clear();
    get_shard_ = SIZE_MAX;
    (void)cursor_.release();
    ResetCounters();  // the parent's reads are the parent's
  }
  // A forked child keeps what the parent gave up as skipped.
  std::unordered_set<size_t> skipped;
  if (shards_) skipped = shards_->skipped();
  (void)shards_.release();  // the parent's, if any: abandoned untouched
  auto shards = DatasetShards::Open(options_, indexes_, remotes_, stream_limits_,
                                    stream_first_shard_, columns_.names().size(), std::move(skipped));
  if (!shards.ok()) return shards.status();
  shards_ = std::move(*shards);
  for (size_t s = 0; s < guessed_heads_.size(); ++s) {
    if (guessed_heads_[s]) shards_->KeepGuessedHead(s, std::move(guessed_heads_[s]));
  }
  for (size_t s = 0; s < guessed_pieces_.size(); ++s) {
    if (guessed_pieces_[s]) shards_->KeepGuessedPieceHead(s, std::move(guessed_pieces_[s]));
  }
  pid_ = me;
  return Status::Ok();
}

std::pair<size_t, uint32_t> StreamingDataset::Locate(uint64_t id) const {
  return locator_->Locate(id);
}

uint64_t StreamingDataset::NodeReaders(int64_t num_workers) const {
  return static_cast<uint64_t>(std::max<int64_t>(1, world_.ranks_per_node)) *
         static_cast<uint64_t>(std::max<int64_t>(1, num_workers));
}

size_t StreamingDataset::OpenThreads(int64_t num_workers) const {
  if (options_.fetch_concurrency) return static_cast<size_t>(*options_.fetch_concurrency);
  // Every reader of the node (each rank's workers) keeps its own requests in
  // flight.
  const uint64_t readers = NodeReaders(num_workers);
  // Under a cache_limit, a reader's extra opens pin room that the limit's
  // budget (one open shard per reader) keeps for the node's other readers;
  // one whose consumer is not called (a DataLoader worker while the main
  // process waits on another) would keep them pinned, and another reader
  // could wait for that room until wait_timeout. So by default only a lone
  // reader opens ahead under a limit (its own scan drops its extras before
  // it waits); fetch_concurrency set explicitly is taken as given.
  if (options_.cache_limit && readers > 1) return 1;
  for (const StreamOptions& s : options_.streams) {
    if (!s.files) continue;
    // Share the node's requests among its readers.
    return std::clamp<size_t>((kNodeFileFetchConcurrency + readers - 1) / readers,
                              kMinFileFetchConcurrency, kRawFileFetchConcurrency);
  }
  // A single pass receives each shard it opens into a buffer of the
  // shard's size, fresh memory the kernel zeroes (and, in a VM, maps) on
  // first touch. In order, two shards at once (the one read, the next
  // received in parallel parts) need half the buffers of four, and
  // workload B's epoch took no more CPU or time (BENCHMARKS.md, "A single
  // pass in order, two shards at once"). Shuffled, it keeps four: there two
  // took more CPU in the same run. Only when every stream that downloads is
  // a single pass: a cached stream's shards go to files.
  bool single = false, cached = false;
  for (const StreamOptions& s : options_.streams) {
    if (s.has_remote()) (ReadsInSinglePass(s) ? single : cached) = true;
  }
  constexpr size_t kSinglePassFetchConcurrency = 2;
  return single && !cached && !options_.plan.shuffle ? kSinglePassFetchConcurrency
                                                     : kShardFetchConcurrency;
}

std::string StreamingDataset::shard_path(size_t g) const {
  const size_t s = stream_of_shard(g);
  return JoinPath(StreamRoot(options_.streams[s]),
                  std::string(indexes_[s]->ref(g - stream_first_shard_[s]).raw_data.basename));
}

Result<std::string> StreamingDataset::shard_file(size_t g) const {
  const size_t s = stream_of_shard(g);
  if (options_.streams[s].single_pass) {
    return InvalidArgumentError(
        "stream " + std::to_string(s) + " (" + remotes_[s]->Describe() +
        ") is read in a single pass: its files are received into memory and never written to " +
        StreamRoot(options_.streams[s]) + ", so they have no local path; read the sample's bytes");
  }
  return shard_path(g);
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
    SLUICE_ASSIGN_OR_RETURN(shard, shards_->Open(g));
    ConsumerWaits waits;
    waits.Add(start, std::chrono::steady_clock::now(), &shard->open_timing());
    Publish(waits);
    if (shard->skipped()) {
      return CorruptError("sample " + std::to_string(id) + ": its shard " + std::to_string(g) +
                          " (" + shard_path(g) + ") was skipped as corrupt or unreadable" +
                          " (skip_corrupt_shards, skip_missing_files)");
    }
    held_.assign(1, shard);
    get_shard_ = g;
  }
  out->where = SampleLocation{g, i};
  out->until_next_read = true;  // its views end at the next call (below)
  SLUICE_RETURN_IF_ERROR(columns_.Read(*shard, g, i, out));
  const auto relaxed = std::memory_order_relaxed;
  consumer_.samples.store(consumer_.samples.load(relaxed) + 1, relaxed);
  consumer_.bytes.store(consumer_.bytes.load(relaxed) + out->raw.size(), relaxed);
  return Status::Ok();
}

Status StreamingDataset::EvictShard(size_t g) {
  if (g >= num_shards()) {
    return OutOfRangeError("shard " + std::to_string(g) + " is past the end (the dataset has " +
                           std::to_string(num_shards()) + " shards)");
  }
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  if (get_shard_ == g) Release();
  const size_t s = stream_of_shard(g);
  return shards_->streams()[s]->Evict(g - stream_first_shard_[s])
      .WithContext("stream " + std::to_string(s));
}

Result<std::vector<int64_t>> StreamingDataset::WorkerIds(
    int64_t epoch, int64_t sample_in_epoch, int64_t worker, int64_t num_workers,
    std::optional<std::string>* shuffle_warning) const {
  if (num_workers < 1 || worker < 0 || worker >= num_workers) {
    return InvalidArgumentError("worker " + std::to_string(worker) + " of " +
                                std::to_string(num_workers) + ": need 0 <= worker < num_workers");
  }
  if (epoch < 0 || sample_in_epoch < 0) {
    return InvalidArgumentError("epoch and sample_in_epoch must not be negative");
  }
  if (!SkipsAhead(skips_, epoch, sample_in_epoch)) {
    const planner::PlanRequest request = Request(epoch, sample_in_epoch, num_workers);
    const auto checkpoints = SharedEpochCheckpoints(CheckpointsPlace(), request);
    return planner::PlanWorker(request, world_.node, world_.rank_in_node, worker, shuffle_warning,
                               checkpoints.get());
  }
  // The rank's whole order (one worker), its skipped steps left out, dealt
  // to the workers batch by batch.
  const int64_t batch = options_.batch_size();
  SLUICE_RETURN_IF_ERROR(CheckSkipsAhead(skips_, epoch, sample_in_epoch, batch, parallel_ranks_));
  const planner::PlanRequest request = Request(epoch, sample_in_epoch, 1);
  const auto checkpoints = SharedEpochCheckpoints(CheckpointsPlace(), request);
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> rank_ids,
                          planner::PlanWorker(request, world_.node, world_.rank_in_node, 0, shuffle_warning,
                                              checkpoints.get()));
  return WorkerIdsSkipping(rank_ids, skips_, epoch, sample_in_epoch / (batch * parallel_ranks_),
                           batch, parallel_ranks_, worker, num_workers);
}

Result<StepRanges> StreamingDataset::StepsHolding(int64_t epoch, int64_t start,
                                                  const std::vector<int64_t>& ids) const {
  const int64_t batch = options_.batch_size();
  const int64_t global_batch = batch * parallel_ranks_;
  if (start % global_batch != 0) {
    return InvalidArgumentError("the state's sample_in_epoch " + std::to_string(start) +
                                " is not a whole step (of " + std::to_string(global_batch) +
                                " samples)");
  }
  // id -> whether a rank reads it; a mixture may read an id more than once,
  // and every step holding it is skipped.
  std::unordered_map<int64_t, bool> found;
  for (int64_t id : ids) found.emplace(id, false);
  StepRanges steps;
  const planner::PlanRequest request = Request(epoch, start, 1);
  const int64_t first_step = start / global_batch;
  for (int64_t node = 0; node < world_.num_nodes; ++node) {
    std::vector<planner::WorkerAt> ranks;
    for (int64_t r = 0; r < world_.ranks_per_node; ++r) ranks.push_back({node, r, 0});
    SLUICE_ASSIGN_OR_RETURN(auto orders, planner::PlanWorkers(request, ranks));
    for (const std::vector<int64_t>& order : orders) {
      // With one worker, a rank's batch j is step first_step + j.
      for (size_t j = 0; j < order.size(); ++j) {
        auto it = found.find(order[j]);
        if (it == found.end()) continue;
        it->second = true;
        const int64_t step = first_step + int64_t(j) / batch;
        steps.emplace_back(step, step + 1);  // merged by the caller
      }
    }
  }
  for (int64_t id : ids) {
    if (!found.at(id)) {
      return InvalidArgumentError(
          "sample " + std::to_string(id) + " is not read in epoch " + std::to_string(epoch) +
          " after sample_in_epoch " + std::to_string(start) + " (read before the state was " +
          "saved, or not a sample of this dataset's " + std::to_string(epoch_size_) +
          " per epoch)");
    }
  }
  return steps;
}

Result<std::vector<std::vector<int64_t>>> StreamingDataset::PeerWorkerIds(
    std::span<const planner::WorkerAt> workers, int64_t epoch, int64_t num_workers,
    const planner::EpochCheckpoints* checkpoints) const {
  if (num_workers < 1) return InvalidArgumentError("num_workers must be at least 1");
  if (epoch < 0) return InvalidArgumentError("epoch must not be negative");
  return planner::PlanWorkers(Request(epoch, 0, num_workers), workers, checkpoints);
}

Result<std::vector<std::vector<int64_t>>> StreamingDataset::ShapeWorkerIds(
    int64_t epoch, int64_t num_nodes, int64_t ranks_per_node, int64_t num_workers,
    int64_t batch_size) const {
  if (num_nodes < 1 || ranks_per_node < 1 || num_workers < 1 || batch_size < 1 || epoch < 0) {
    return InvalidArgumentError("a world shape needs at least one node, rank per node, worker "
                                "and sample per batch, and an epoch >= 0");
  }
  const int64_t ranks = num_nodes * ranks_per_node;
  // The shape is a planning world: a replicated run's ranks are its groups.
  planner::PlanRequest request = Request(epoch, 0, num_workers);
  request.config.replication.reset();
  request.world.num_nodes = num_nodes;
  request.world.ranks_per_node = ranks_per_node;
  // As a run on that shape: the initial nodes are set when they differ.
  request.config.initial_physical_nodes = options_.plan.initial_physical_nodes;
  if (initial_physical_nodes_ > 0 && initial_physical_nodes_ != num_nodes) {
    request.config.initial_physical_nodes = initial_physical_nodes_;
  }
  const bool skipping = SkipsAhead(skips_, epoch, 0);
  if (skipping) {
    // The steps are that shape's (its batch x ranks), as when they were skipped.
    SLUICE_RETURN_IF_ERROR(CheckSkipsAhead(skips_, epoch, 0, batch_size, ranks)
                               .WithContext("planning another world shape"));
    request.world.workers_per_rank = 1;
  }
  std::vector<planner::WorkerAt> all;
  for (int64_t n = 0; n < num_nodes; ++n) {
    for (int64_t r = 0; r < ranks_per_node; ++r) {
      if (skipping) {
        all.push_back({n, r, 0});
        continue;
      }
      for (int64_t w = 0; w < num_workers; ++w) all.push_back({n, r, w});
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto planned, planner::PlanWorkers(request, all, nullptr));
  if (!skipping) return planned;
  // Each rank's order, its skipped steps left out, dealt to its workers
  // batch by batch (WorkerIds' rule).
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<int64_t>& rank_ids : planned) {
    for (int64_t w = 0; w < num_workers; ++w) {
      out.push_back(WorkerIdsSkipping(rank_ids, skips_, epoch, 0, batch_size, ranks, w,
                                      num_workers));
    }
  }
  return out;
}

Result<std::optional<planner::EpochCheckpoints>> StreamingDataset::EpochCheckpoints(int64_t epoch) const {
  if (epoch < 0) return InvalidArgumentError("epoch must not be negative");
  const planner::PlanRequest request = Request(epoch, 0, 1);
  if (!planner::CheckpointsApply(request.config)) return std::optional<planner::EpochCheckpoints>();
  SLUICE_ASSIGN_OR_RETURN(planner::EpochCheckpoints cp, planner::PlanCheckpoints(request));
  return std::optional<planner::EpochCheckpoints>(std::move(cp));
}

size_t StreamingDataset::PassPrefetchWindow(int64_t own) const {
  return static_cast<size_t>(std::clamp<int64_t>(options_.predownload_samples(), 1, own + 1));
}

size_t StreamingDataset::PassLookAhead(const IterationOptions& iteration) const {
  uint64_t largest = 0;
  for (size_t g = 0; g < locator_->num_shards(); ++g) {
    largest = std::max(largest, locator_->start(g + 1) - locator_->start(g));
  }
  return PrefetchSchedule::LookAheadReach(
      {.keep_reused = iteration.keep_reused, .open_threads = iteration.open_threads},
      static_cast<size_t>(largest));
}

std::optional<uint64_t> StreamingDataset::PassHoldBytes(int64_t num_workers) const {
  bool any = false;
  for (size_t s = 0; s < options_.streams.size() && s < indexes_.size(); ++s) {
    any = any || (ReadsInSinglePass(options_.streams[s]) && indexes_[s]->size() > 0);
  }
  if (!any) return std::nullopt;
  // Every rank of the node and each of its workers holds shards of its own.
  return options_.single_pass_memory_bytes(NodeReaders(num_workers));
}

Status StreamingDataset::IterBegin(int64_t epoch, int64_t sample_in_epoch, int64_t worker,
                                   int64_t num_workers) {
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  // The previous iteration may have planned and opened this one's start.
  IterationCursor::Handoff handoff;
  std::vector<int64_t> ids;
  std::optional<std::string> warning;
  bool planned = false;
  if (cursor_) {
    const IterationPlace& was = cursor_->place();
    // Only this epoch's start takes the next epoch's plan: any other pass
    // stops its planner rather than wait for it.
    const bool next = sample_in_epoch == 0 && epoch == was.epoch + 1 && worker == was.worker &&
                      num_workers == was.num_workers;
    handoff = cursor_->Stop(next);
    if (handoff.next_ids && next) {
      ids = std::move(*handoff.next_ids);
      warning = std::move(handoff.next_shuffle_warning);
      planned = true;
    }
  }
  Release();
  cursor_.reset();
  shuffle_warning_.reset();
  const bool valid = worker >= 0 && worker < num_workers && epoch >= 0 && sample_in_epoch >= 0;
  // A pass numbers shards in 32 bits (PrefetchSchedule::Part).
  if (locator_->num_shards() > PrefetchSchedule::kMaxShards) {
    return InvalidArgumentError("the dataset's " + std::to_string(locator_->num_shards()) +
                                " shards are more than a pass can number (" +
                                std::to_string(PrefetchSchedule::kMaxShards) + ")");
  }
  IterationOptions iteration;
  iteration.keep_reused = !options_.cache_limit.has_value();
  iteration.open_threads = OpenThreads(num_workers);
  // A single pass keeps as many passed shards' buffers for its next
  // receives as it receives at once.
  for (const std::unique_ptr<StreamShards>& s : shards_->streams()) {
    s->KeepReceiveBuffers(iteration.open_threads);
  }
  iteration.hold_bytes = PassHoldBytes(num_workers);
  // In windows when the worker's plan is larger than a window (with
  // skipped steps ahead, the rank's order in windows dealt to its workers).
  bool windowed = false;
  int64_t own = 0;
  const bool skipping = SkipsAhead(skips_, epoch, sample_in_epoch);
  if (!planned && valid) {
    SLUICE_ASSIGN_OR_RETURN(own,
                            planner::WorkerPlanSize(Request(epoch, sample_in_epoch, num_workers)));
    windowed = own > options_.pass_window_ids;
    if (windowed && skipping) {
      SLUICE_RETURN_IF_ERROR(
          CheckSkipsAhead(skips_, epoch, sample_in_epoch, options_.batch_size(), parallel_ranks_));
    }
    const std::string what = "worker " + std::to_string(worker) + " of " + std::to_string(num_workers) +
                             "'s pass over epoch " + std::to_string(epoch);
    if (windowed) {
      iteration.look_ahead = PassLookAhead(iteration);
      const int64_t held = WindowedPassPositions(static_cast<uint64_t>(options_.pass_window_ids),
                                                 PassPrefetchWindow(own), iteration.look_ahead);
      SLUICE_RETURN_IF_ERROR(planner::CheckPlanMemory(
          what + " in windows of " + std::to_string(options_.pass_window_ids) + " ids", "sample", held,
          kPassBytesPerPosition, planner::ProcessMemoryLimit(), "lower pass_window_ids"));
    } else {
      // A pass holds its worker's whole plan, and near its end the next
      // epoch's. Checked before planning, so an epoch too large for one
      // worker fails saying so, not out of memory.
      SLUICE_RETURN_IF_ERROR(planner::CheckPlanMemory(
          what, "sample", own,
          kPassBytesPerPosition + (options_.prefetch_next_epoch ? kNextEpochBytesPerPosition : 0),
          planner::ProcessMemoryLimit(),
          "spread the epoch over more ranks or DataLoader workers (each holds only its share), or lower "
          "pass_window_ids so that the pass is read in windows"));
    }
  }
  // Head first: with a peek to serve it, the first sample need not wait
  // for the whole plan (IterationCursor); WorkerIds owns the other cases'
  // plans and errors. In windows the head also gives the plan's errors and
  // shuffle warning before the pass starts.
  std::optional<PlanRest> rest;
  if (!planned && valid && (windowed || (options_.peek_first_sample && !skipping))) {
    // Skipping in windows: the rank's order (one worker), dealt out by the
    // pass's producer.
    const bool dealt = windowed && skipping;
    planner::PlanRequest request = Request(epoch, sample_in_epoch, dealt ? 1 : num_workers);
    // The node's checkpoints of the epoch (made by its first process, waited
    // for by the others): the head and the rest start from them. Except
    // the head of the epoch's first sample (global rank 0's worker 0 from
    // the start), whose draws come first in the epoch: no checkpoint
    // shortens them, and making the node's (PlanCheckpoints replays the
    // whole epoch, and writes the file) waits on the rest's thread.
    const bool head_first_in_epoch =
        !windowed && sample_in_epoch == 0 && world_.global_rank == 0 && worker == 0;
    std::shared_ptr<const planner::EpochCheckpoints> checkpoints =
        head_first_in_epoch ? nullptr : SharedEpochCheckpoints(CheckpointsPlace(), request);
    SLUICE_ASSIGN_OR_RETURN(planner::WorkerHead head,
                            planner::PlanWorkerHead(request, world_.node, world_.rank_in_node, dealt ? 0 : worker,
                                                    1, &warning, checkpoints.get()));
    ids = std::move(head.ids);
    if (windowed) {
      // The head only for the peek (none when dealt: the rank's first id
      // need not be this worker's). A whole plan the planner made for it (a
      // shuffle it cannot plan in windows) is windowed, not planned again.
      std::shared_ptr<const std::vector<int64_t>> planned;
      const size_t keep = options_.peek_first_sample && !dealt ? std::min<size_t>(ids.size(), 1) : 0;
      if (head.whole) {
        planned = std::make_shared<const std::vector<int64_t>>(std::move(ids));
        ids.assign(planned->begin(), planned->begin() + static_cast<std::ptrdiff_t>(keep));
      } else {
        ids.resize(keep);
        ids.shrink_to_fit();
      }
      std::optional<SkipDealer> skip;
      if (dealt) {
        const int64_t global_batch = options_.batch_size() * parallel_ranks_;
        skip.emplace(skips_, epoch, sample_in_epoch / global_batch, options_.batch_size(), parallel_ranks_, worker,
                     num_workers);
      }
      rest = PlanRest{std::move(request), world_.node, world_.rank_in_node,
                      static_cast<size_t>(options_.pass_window_ids), std::move(planned), std::move(skip),
                      std::move(checkpoints)};
    } else if (!head.whole) {
      rest = PlanRest{std::move(request), world_.node, world_.rank_in_node};
      rest->checkpoints = std::move(checkpoints);
      if (head_first_in_epoch) rest->checkpoints_place = CheckpointsPlace();
    }
  } else if (!planned) {
    SLUICE_ASSIGN_OR_RETURN(ids, WorkerIds(epoch, sample_in_epoch, worker, num_workers, &warning));
  }
  // Never more than the epoch (so window arithmetic cannot overflow; the
  // cursor clamps it to the whole plan's size, and in windows, which never
  // holds it, it is clamped here to the size the plan was checked for).
  iteration.window = windowed ? PassPrefetchWindow(own)
                              : static_cast<size_t>(std::clamp<int64_t>(
                                    options_.predownload_samples(), 1,
                                    rest ? INT64_MAX - 1 : static_cast<int64_t>(ids.size()) + 1));
  open_threads_ = static_cast<int64_t>(iteration.open_threads);
  iteration.extra_opens_never_wait = options_.cache_limit.has_value();
  iteration.peek_first_sample = options_.peek_first_sample;
  iteration.peek_head_start = options_.peek_head_start;
  iteration.populate_after = static_cast<size_t>(std::max<int64_t>(options_.batch_size(), 1));
  std::optional<NextEpochPlan> next;
  // A next epoch with skipped steps is planned when it starts (WorkerIds).
  if (options_.prefetch_next_epoch && !SkipsAhead(skips_, epoch + 1, 0)) {
    next = NextEpochPlan{Request(epoch + 1, 0, num_workers), world_.node, world_.rank_in_node, CheckpointsPlace()};
  }
  state_epoch_ = epoch;
  state_start_ = sample_in_epoch;
  cursor_ = std::make_unique<IterationCursor>(
      IterationPlace{epoch, sample_in_epoch, worker, num_workers}, std::move(ids), locator_,
      shards_.get(), iteration, std::move(next), std::move(handoff.opened), std::move(rest));
  shuffle_warning_ = std::move(warning);
  return Status::Ok();
}

Result<size_t> StreamingDataset::NextBatch(size_t max, int64_t* ids, std::vector<SampleFields>* out) {
  return Next(max, ids, out);
}

Result<size_t> StreamingDataset::NextIds(size_t max, int64_t* ids) {
  return Next(max, ids, nullptr);
}

Result<size_t> StreamingDataset::Next(size_t max, int64_t* ids, std::vector<SampleFields>* out) {
  const char* call = out ? "NextBatch" : "NextIds";
  if (!cursor_) return InvalidArgumentError(std::string(call) + " before IterBegin");
  SLUICE_RETURN_IF_ERROR(EnsureProcess());
  if (!cursor_) {
    return InvalidArgumentError(std::string(call) + " in a forked process: call IterBegin there");
  }
  // The last call's views end here; the next Acquire lets the prefetcher
  // drop the shards behind this call's first position.
  Release();
  IterationCursor::BatchTally tally;
  auto got = cursor_->NextBatch(max, columns_, ids, out, &tally);
  get_shard_ = SIZE_MAX;
  // One store per counter per call: the consumer's thread is the only writer.
  const auto relaxed = std::memory_order_relaxed;
  auto bump = [&](std::atomic<uint64_t>& a, uint64_t n) {
    if (n != 0) a.store(a.load(relaxed) + n, relaxed);
  };
  if (got.ok() && *got > 0) {
    if (out) bump(consumer_.samples, *got);  // else each Get counts its own
    bump(consumer_.batches, 1);
    bump(consumer_.lead_samples_sum, tally.lead);
    bump(consumer_.lead_shards_sum, tally.lead_shards);
    auto lower = [&](std::atomic<uint64_t>& a, uint64_t v) {
      if (v < a.load(relaxed)) a.store(v, relaxed);
    };
    lower(consumer_.lead_samples_min, tally.lead);
    lower(consumer_.lead_shards_min, tally.lead_shards);
    lower(consumer_.window_lead_samples_min, tally.lead);
    lower(consumer_.window_lead_shards_min, tally.lead_shards);
    lower(consumer_.record_lead_samples_min, tally.lead);
    lower(consumer_.record_lead_shards_min, tally.lead_shards);
  }
  bump(consumer_.bytes, tally.bytes);
  bump(consumer_.samples_skipped, tally.skipped);
  consumer_.lead.store(tally.lead, relaxed);
  consumer_.lead_shards.store(tally.lead_shards, relaxed);
  Publish(tally.waits);
  // The node's record: when a pass ends (a worker's last counts before it
  // exits) and at most once a period otherwise. Its failure never fails a
  // read; the next one tries again.
  if (got.ok() && (*got == 0 || CoarseNowNs() >= next_publish_ns_.load(relaxed))) {
    (void)PublishMetrics();
  }
  return got;
}

void StreamingDataset::Publish(const ConsumerWaits& w) {
  if (w.total_ns == 0) return;
  const auto relaxed = std::memory_order_relaxed;
  auto bump = [&](std::atomic<uint64_t>& a, uint64_t n) {
    if (n != 0) a.store(a.load(relaxed) + n, relaxed);
  };
  bump(consumer_.wait_total, w.total_ns);
  bump(consumer_.wait_download, w.download_ns);
  bump(consumer_.wait_peer, w.peer_download_ns);
  bump(consumer_.wait_room, w.cache_room_ns);
  bump(consumer_.wait_decode, w.decode_ns);
  bump(consumer_.wait_other, w.other_ns);
}

void StreamingDataset::ResetCounters() {
  for (std::atomic<uint64_t>* a :
       {&consumer_.samples, &consumer_.bytes, &consumer_.batches, &consumer_.lead,
        &consumer_.samples_skipped, &consumer_.wait_total, &consumer_.wait_download,
        &consumer_.wait_peer, &consumer_.wait_room, &consumer_.wait_decode,
        &consumer_.wait_other, &consumer_.lead_shards, &consumer_.lead_samples_sum,
        &consumer_.lead_shards_sum}) {
    a->store(0, std::memory_order_relaxed);
  }
  for (std::atomic<uint64_t>* a :
       {&consumer_.lead_samples_min, &consumer_.lead_shards_min,
        &consumer_.window_lead_samples_min, &consumer_.window_lead_shards_min,
        &consumer_.record_lead_samples_min, &consumer_.record_lead_shards_min}) {
    a->store(UINT64_MAX, std::memory_order_relaxed);
  }
  opened_at_ = std::chrono::steady_clock::now();
  for (DatasetMetrics& r : last_reports_) r = DatasetMetrics();
  for (NodeLeadWindow& w : lead_windows_) w = NodeLeadWindow();
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    record_lead_samples_.Clear();
    record_lead_shards_.Clear();
  }
  RebaseHostCounts();
  next_publish_ns_.store(0, std::memory_order_relaxed);
}

ResumeState StreamingDataset::State(uint64_t rank_samples) const {
  ResumeState s;
  s.epoch = state_epoch_;
  // Replicas read the same samples: the job consumed rank_samples per
  // group of replicas (Mosaic: yielded * ranks // replication).
  s.sample_in_epoch = PositionAfter(state_epoch_, state_start_,
                                    rank_samples * static_cast<uint64_t>(parallel_ranks_));
  s.num_canonical_nodes = num_canonical_nodes_;
  s.shuffle_seed = options_.plan.shuffle_seed;
  s.initial_physical_nodes = initial_physical_nodes_;
  s.order = Order(s.shuffle_seed, s.num_canonical_nodes, s.epoch);
  return s;
}

OrderRecord StreamingDataset::Order(uint64_t shuffle_seed, int64_t num_canonical_nodes,
                                    int64_t epoch) const {
  OrderRecord r;
  for (size_t s = 0; s < indexes_.size(); ++s) {
    std::optional<std::string>& fingerprint = index_fingerprints_[s];
    if (!fingerprint) fingerprint = IndexFingerprint(*indexes_[s]);
    r.streams.push_back(StreamOrderPart(options_.streams[s], *indexes_[s], *fingerprint));
  }
  r.sampling = SamplingOrderPart(options_, shuffle_seed, num_canonical_nodes);
  r.worlds = worlds_;
  for (const SkipRange& k : skips_) {
    if (k.epoch == epoch) r.skips.push_back(k);
  }
  r.mixture_past = MixturePastOrderPart(options_.plan, epoch);
  return r;
}

int64_t StreamingDataset::PositionAfter(int64_t epoch, int64_t start, uint64_t consumed) const {
  return sluice::PositionAfter(skips_, epoch, start, consumed);
}

Status StreamingDataset::LoadState(const ResumeState& state, const ResumeOptions& options) {
  if (state.num_canonical_nodes < 1) {
    return InvalidArgumentError("resume state: num_canonical_nodes must be positive");
  }
  SLUICE_ASSIGN_OR_RETURN(AdaptParts adapt, ParseAdaptParts(options.adapt));
  const WorldShape here{world_.num_nodes, world_.ranks_per_node};
  std::vector<WorldShape> worlds{here};
  std::vector<SkipRange> skips;
  std::vector<planner::PlanConfig::MixtureChange> mixture_past;
  // New runs draw a schedule by Tijdeman's rule; a resume keeps its state's.
  planner::MixtureRule mixture_rule = planner::MixtureRule::kTijdeman;
  if (state.order) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<planner::MixtureRule> recorded, RecordedMixtureRule(*state.order));
    mixture_rule = recorded.value_or(planner::MixtureRule::kTijdeman);
    OrderRecord now = Order(state.shuffle_seed, state.num_canonical_nodes, state.epoch);
    SetRecordedMixtureRule(&now.sampling, mixture_rule);
    now.worlds = {here};
    // Errors name a stream as its record does: by its remote, redacted (the
    // cache folder is not part of the order and differs between runs), or
    // by its folder when it has no remote.
    std::vector<std::string> names;
    for (const StreamOptions& s : options_.streams) {
      names.push_back(s.has_remote() ? RedactUrl(s.remote) : StreamRoot(s));
    }
    SLUICE_RETURN_IF_ERROR(CompareOrder(*state.order, now, adapt, names));
    worlds = state.order->worlds;
    if (!(worlds.back() == here)) worlds.push_back(here);
    for (const SkipRange& k : state.order->skips) {
      if (k.epoch == state.epoch) skips.push_back(k);
    }
    // A new schedule takes over at the state's position, the past kept.
    SLUICE_ASSIGN_OR_RETURN(mixture_past,
                            ResumedMixturePast(*state.order, now, state.epoch, state.sample_in_epoch));
  }
  const int64_t global_batch = options_.batch_size() * parallel_ranks_;
  SLUICE_ASSIGN_OR_RETURN(std::vector<SkipRange> steps,
                          SkipRangesFromSteps(state.epoch, options.skip_steps, global_batch));
  SLUICE_ASSIGN_OR_RETURN(std::vector<SkipRange> samples,
                          SkipRangesFromSamples(state.epoch, options.skip_samples, global_batch));
  skips.insert(skips.end(), steps.begin(), steps.end());
  skips.insert(skips.end(), samples.begin(), samples.end());
  skips = MergeSkipRanges(std::move(skips));
  // The ranges are this world's steps, or steps_of's world's.
  const auto [step_batch, step_ranks] =
      options.steps_of.value_or(std::make_pair(options_.batch_size(), parallel_ranks_));
  SLUICE_RETURN_IF_ERROR(
      CheckSkipsAhead(skips, state.epoch, state.sample_in_epoch, step_batch, step_ranks));
  // The prefetch thread reads the planning options: stop the iteration.
  Release();
  cursor_.reset();
  DatasetOptions saved = options_;
  int64_t saved_ipn = initial_physical_nodes_;
  options_.plan.num_canonical_nodes = state.num_canonical_nodes;
  options_.plan.shuffle_seed = state.shuffle_seed;
  options_.plan.mixture_past = std::move(mixture_past);
  if (options_.plan.mixture) options_.plan.mixture->rule = mixture_rule;
  if (state.initial_physical_nodes > 0) initial_physical_nodes_ = state.initial_physical_nodes;
  auto derived = planner::DerivePlan(Request(state.epoch, state.sample_in_epoch, 1));
  if (!derived.ok()) {
    options_ = std::move(saved);
    initial_physical_nodes_ = saved_ipn;
    return derived.status().WithContext("resume state");
  }
  if (!options.skip_sample_ids.empty()) {
    // Planned with the state's seed and canonical nodes (options_, set above).
    auto held = StepsHolding(state.epoch, state.sample_in_epoch, options.skip_sample_ids);
    Result<std::vector<SkipRange>> more =
        held.ok() ? SkipRangesFromSteps(state.epoch, *held, global_batch)
                  : Result<std::vector<SkipRange>>(held.status());
    if (!more.ok()) {
      options_ = std::move(saved);
      initial_physical_nodes_ = saved_ipn;
      return more.status().WithContext("skip_sample_ids");
    }
    skips.insert(skips.end(), more->begin(), more->end());
    skips = MergeSkipRanges(std::move(skips));
  }
  num_canonical_nodes_ = derived->num_canonical_nodes;
  state_epoch_ = state.epoch;
  state_start_ = state.sample_in_epoch;
  worlds_ = std::move(worlds);
  skips_ = std::move(skips);
  return Status::Ok();
}

DatasetCounters StreamingDataset::counters() const {
  DatasetCounters c;
  c.consumer_wait_ns = consumer_.wait_total.load(std::memory_order_relaxed);
  c.samples_skipped = consumer_.samples_skipped.load(std::memory_order_relaxed);
  if (shards_) c.shards_skipped = shards_->skipped_count();
  if (pid_ != ::getpid()) return c;
  for (const auto& s : shards_->streams()) {
    CacheCounters cc = s->cache_counters();
    c.bytes_downloaded += s->bytes_downloaded();
    c.shards_downloaded += cc.shards_fetched;
    c.shards_evicted += cc.shards_evicted;
    c.cache_hits += cc.cache_hits;
  }
  return c;
}

DatasetMetrics StreamingDataset::Metrics() const {
  DatasetMetrics m;
  const auto relaxed = std::memory_order_relaxed;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_at_).count();
  m.samples = consumer_.samples.load(relaxed);
  m.bytes = consumer_.bytes.load(relaxed);
  m.batches = consumer_.batches.load(relaxed);
  m.prefetch_lead_samples = consumer_.lead.load(relaxed);
  m.prefetch_lead_shards = consumer_.lead_shards.load(relaxed);
  m.lead_samples_sum = consumer_.lead_samples_sum.load(relaxed);
  m.lead_shards_sum = consumer_.lead_shards_sum.load(relaxed);
  m.lead_samples_min = MinOrZero(consumer_.lead_samples_min);
  m.lead_shards_min = MinOrZero(consumer_.lead_shards_min);
  m.waits.total_ns = consumer_.wait_total.load(relaxed);
  m.waits.download_ns = consumer_.wait_download.load(relaxed);
  m.waits.peer_download_ns = consumer_.wait_peer.load(relaxed);
  m.waits.cache_room_ns = consumer_.wait_room.load(relaxed);
  m.waits.decode_ns = consumer_.wait_decode.load(relaxed);
  m.waits.other_ns = consumer_.wait_other.load(relaxed);
  m.samples_skipped = consumer_.samples_skipped.load(relaxed);
  m.cache_limit = options_.cache_limit.value_or(0);
  m.fetch_concurrency = open_threads_;
  for (const auto& r : remotes_) {
    if (r) {
      m.remote = r->Describe();
      break;
    }
  }
  m.hosts = SnapshotHostStats();
  SetHttpTotals(&m);
  if (pid_ != ::getpid() || !shards_) return m;
  m.shards_skipped = shards_->skipped_count();
  for (const auto& s : shards_->streams()) {
    CacheCounters cc = s->cache_counters();
    m.bytes_downloaded += s->bytes_downloaded();
    m.downloads += s->downloads();
    m.download_errors += s->download_errors();
    m.download_ns += s->download_ns();
    m.shards_downloaded += cc.shards_fetched;
    m.shards_evicted += cc.shards_evicted;
    m.cache_hits += cc.cache_hits;
    m.cache_peer_fetch_wait_ns += static_cast<uint64_t>(cc.peer_fetch_wait.count());
    m.cache_room_wait_ns += static_cast<uint64_t>(cc.room_wait.count());
    if (ShardCache* cache = s->cache()) m.cache_bytes_on_disk += cache->bytes_used();
  }
  return m;
}

std::string StreamingDataset::MetricsReport() {
  auto text = MetricsReport(MetricsScope::kProcess);
  return text.ok() ? *text : std::string("{}");  // the process scope never fails
}

Result<DatasetMetrics> StreamingDataset::Metrics(MetricsScope scope, NodeLeadWindow* window) {
  DatasetMetrics own = Metrics();
  if (scope == MetricsScope::kProcess) return own;
  SLUICE_RETURN_IF_ERROR(PublishMetrics());
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(node_mu_);
    dir = node_dir_;
  }
  SLUICE_ASSIGN_OR_RETURN(
      DatasetMetrics sum,
      SumNodeRecords(dir, scope == MetricsScope::kJob ? std::optional<uint64_t>(instance_)
                                                      : std::nullopt,
                     options_.env, options_.metrics_retention_s, window));
  sum.seconds = own.seconds;
  sum.cache_bytes_on_disk = own.cache_bytes_on_disk;
  sum.cache_limit = own.cache_limit;
  sum.fetch_concurrency = own.fetch_concurrency;
  sum.remote = own.remote;
  return sum;
}

Result<std::string> StreamingDataset::MetricsReport(MetricsScope scope) {
  NodeLeadWindow& leads = lead_windows_[static_cast<int>(scope)];
  SLUICE_ASSIGN_OR_RETURN(DatasetMetrics now, Metrics(scope, &leads));
  DatasetMetrics& last = last_reports_[static_cast<int>(scope)];
  DatasetMetrics window = MetricsSince(now, last);
  if (scope != MetricsScope::kProcess) {
    // The least leads of the batches the records added since the last sum.
    window.lead_samples_min = leads.lead_samples_min;
    window.lead_shards_min = leads.lead_shards_min;
    window.readers = std::max<uint64_t>(leads.readers, 1);
  } else {
    // The window's least lead: the consumer's, reset here (a batch racing
    // the reset may land in either window).
    auto take = [](std::atomic<uint64_t>& a) {
      const uint64_t v = a.exchange(UINT64_MAX, std::memory_order_relaxed);
      return v == UINT64_MAX ? 0 : v;
    };
    window.lead_samples_min = take(consumer_.window_lead_samples_min);
    window.lead_shards_min = take(consumer_.window_lead_shards_min);
  }
  std::string text = MetricsJson(now, window);
  last = std::move(now);
  return text;
}

void StreamingDataset::RebaseHostCounts() {
  std::lock_guard<std::mutex> lock(node_mu_);
  RebaseHostCountsLocked();
}

void StreamingDataset::RebaseHostCountsLocked() {
  host_base_ = SnapshotHostStats();
  host_base_pid_ = ::getpid();
}

Status StreamingDataset::PublishMetrics() {
  next_publish_ns_.store(
      CoarseNowNs() +
          static_cast<uint64_t>(std::chrono::nanoseconds(kNodeRecordPeriod).count()),
      std::memory_order_relaxed);
  DatasetMetrics m = Metrics();
  // A forked child's HTTP counts began at its parent's: the record holds
  // only what came after (the parent's record has the rest), of the hosts
  // that saw requests since.
  std::lock_guard<std::mutex> lock(node_mu_);
  if (host_base_pid_ != ::getpid()) RebaseHostCountsLocked();
  // This record closes a period of batches: its least leads join those
  // after the earlier records (a batch racing this, from another thread,
  // may land in the next period).
  const uint64_t samples_min =
      consumer_.record_lead_samples_min.exchange(UINT64_MAX, std::memory_order_relaxed);
  const uint64_t shards_min =
      consumer_.record_lead_shards_min.exchange(UINT64_MAX, std::memory_order_relaxed);
  if (samples_min != UINT64_MAX) record_lead_samples_.Close(m.batches, samples_min);
  if (shards_min != UINT64_MAX) record_lead_shards_.Close(m.batches, shards_min);
  m.lead_samples_steps = record_lead_samples_;
  m.lead_shards_steps = record_lead_shards_;
  std::vector<HostStatsSnapshot> hosts = HostsSince(m.hosts, host_base_);
  std::erase_if(hosts,
                [](const HostStatsSnapshot& h) { return h.attempts == 0 && h.requests == 0; });
  m.hosts = std::move(hosts);
  SetHttpTotals(&m);
  if (node_dir_.empty()) {
    if (options_.streams.empty()) return InvalidArgumentError("a dataset without streams");
    SLUICE_ASSIGN_OR_RETURN(node_dir_, NodeMetricsDir(options_.streams[0].local, options_.env));
    // Best effort: a bad retention variable is said when someone sums, and
    // must not keep this record from being written.
    (void)PruneNodeRecords(node_dir_, options_.env, options_.metrics_retention_s);
  }
  return WriteNodeRecord(node_dir_, instance_, m, options_.env)
      .WithContext("the node's metrics record in " + node_dir_);
}

}  // namespace sluice

// A streaming dataset: one or more streams read through the node-wide shard
// cache, random access by global sample id, and deterministic iteration of
// one (node, rank, worker)'s planned order with prefetching and resumption.
//
// Global sample ids number the streams' samples in stream order (stream 0's
// shards first), as the planner and Mosaic do.
//
// Thread safety: one thread at a time per StreamingDataset, all methods
// included (the prefetcher's thread is internal).
// Views: the SampleFields a call hands out point into mapped shard files (or
// into their own scratch: Get and NextBatch read with until_next_read,
// shard_view.h) and stay valid until the next Get/NextBatch/IterBegin/Release call or the
// dataset's destruction, whichever comes first.
// Fork safety: Open loads the indexes only (no thread, no cache state). The
// shard caches and the prefetch thread are created in the process that
// reads; a forked child that reads gets its own (the parent's are abandoned
// untouched in the child).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sys/types.h>

#include "base/status.h"
#include "engine/dataset/dataset_columns.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/dataset_metrics.h"
#include "engine/dataset/dataset_shards.h"
#include "engine/dataset/iteration_cursor.h"
#include "engine/dataset/node_checkpoints.h"
#include "engine/dataset/lead_minima.h"
#include "engine/dataset/node_metrics.h"
#include "engine/dataset/opened_shard.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/resume_state.h"
#include "engine/planner/plan.h"
#include "formats/dataset/sample_locator.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {

// What this process did, summed over the streams.
struct DatasetCounters {
  uint64_t bytes_downloaded = 0;   // stored bytes copied from remotes
  uint64_t shards_downloaded = 0;  // shard files fetched into the cache
  uint64_t shards_evicted = 0;
  uint64_t cache_hits = 0;         // shard files found present
  uint64_t consumer_wait_ns = 0;   // NextBatch/Get time spent waiting for shards
  // skip_corrupt_shards: shards given up as corrupt, and the samples
  // iteration skipped because of them (this process).
  uint64_t shards_skipped = 0;
  uint64_t samples_skipped = 0;
};

class StreamingDataset {
 public:
  // Loads every stream's index (downloading it once per node when remote is
  // set), checks that the shards of a stream have the same columns and
  // format (its shard 0's), and cache_limit by Mosaic's checks (its
  // ValueErrors) when asked, then against one reader's minimal working set
  // (cache_budget.h), derives the plan
  // (Mosaic's errors for bad planning options) and resolves the world.
  // A "pkl" column without allow_unsafe_types is refused (ValueError, with
  // Mosaic's text). Streams of different formats (MDS, JSONL, CSV) and
  // columns mix, as Mosaic's do; the shards of one stream may not. A local-only
  // stream without index.json: kNotFound with Mosaic's RuntimeError text.
  static Result<std::unique_ptr<StreamingDataset>> Open(DatasetOptions options);
  ~StreamingDataset();
  StreamingDataset(const StreamingDataset&) = delete;
  StreamingDataset& operator=(const StreamingDataset&) = delete;

  uint64_t num_samples() const { return locator_->total(); }  // all streams' samples
  // Global sample id -> global shard (streams in order, as the planner
  // numbers them). Immutable; shared, so it may outlive this object.
  std::shared_ptr<const SampleLocator> sample_locator() const { return locator_; }
  int64_t epoch_size() const { return epoch_size_; }       // samples per epoch, all ranks
  // Samples per rank per epoch: ceil(epoch_size / world size), Mosaic's len().
  int64_t length() const;
  size_t num_streams() const { return indexes_.size(); }
  // The index stream `s` (< num_streams()) was opened with, however it was
  // loaded (LoadStreamIndex); valid for the dataset's lifetime.
  const ShardTable& stream_index(size_t s) const { return *indexes_[s]; }
  size_t num_shards() const { return stream_first_shard_.back(); }  // all streams'
  // Samples in global shard `g` (shards numbered stream by stream, as Mosaic
  // does) and the stream holding it. g < num_shards().
  uint64_t shard_samples(size_t g) const;
  size_t stream_of_shard(size_t g) const;
  // Global shard `g`'s index entry, as its stream's index describes it (a
  // copy: the caller owns it). g < num_shards().
  ShardEntry shard_entry(size_t g) const;
  // Where global shard `g`'s data file is (or will be) on this node: the
  // cached file, or the file read in place. For a raw-file stream, the
  // file itself. Valid while the shard is present (cache_limit may evict it
  // once no reader holds it).
  std::string shard_path(size_t g) const;
  // shard_path for a caller that will open the file: an error naming the
  // stream when its shards are never on disk (a single-pass stream with a
  // remote receives them into memory; ask for the sample's bytes instead).
  Result<std::string> shard_file(size_t g) const;
  // The global shard holding global sample `id` (< num_samples()).
  size_t shard_of_sample(uint64_t id) const { return Locate(id).first; }
  // Global sample `id`'s shard and its index in that shard (< num_samples()):
  // where a sample came from, as the planner's ids name it.
  std::pair<size_t, uint32_t> sample_origin(uint64_t id) const { return Locate(id); }
  // Shown where streams differ in format or a column's encoding.
  static constexpr const char* kMixed = "mixed";
  // The dataset's columns: every stream's column names, first seen first
  // (DatasetColumns). The fields of a sample are laid out by them; a column
  // its stream lacks is an empty view with a null data pointer.
  const std::vector<std::string>& column_names() const { return columns_.names(); }
  const DatasetColumns& columns() const { return columns_; }
  // Each column's encoding where every stream with shards has it with the
  // same encoding, else kMixed.
  const std::vector<std::string>& column_encodings() const { return column_encodings_; }
  // The shards' format ("mds", "json", "csv", "tsv", "xsv", "raw") when every
  // stream has the same, else kMixed: then stream_format() says what the
  // fields of each stream's samples are.
  const std::string& format() const { return format_; }
  // Stream `s`'s format and the encoding of each dataset column in it ("" for
  // a column it lacks; none for a stream without shards). Every shard of a
  // stream has the same. s < num_streams().
  const std::string& stream_format(size_t s) const { return stream_formats_[s]; }
  const std::vector<std::string>& stream_column_encodings(size_t s) const {
    return stream_encodings_[s];
  }
  const ResolvedWorld& world() const { return world_; }
  const DatasetOptions& options() const { return options_; }

  // Sample `id` (a global id), fetching its shard if needed.
  Status Get(uint64_t id, SampleFields* out);

  // Deletes global shard `g`'s cached files (Mosaic's evict_shard; see
  // StreamShards::Evict), first dropping this process's hold from Get.
  // Errors: kOutOfRange, a stream read in place, a shard being read.
  Status EvictShard(size_t g);
  // Tests only: global shard `g` as this process holds it open now (an
  // iteration's, a Get's), or null; opens nothing.
  std::shared_ptr<const OpenedShard> HeldShardForTesting(size_t g) const {
    return shards_ ? shards_->HeldForTesting(g) : nullptr;
  }

  // The ids this process's worker reads in `epoch`, starting after
  // `sample_in_epoch` samples of all ranks (resumption), -1 padding removed;
  // *shuffle_warning, when given, as planner::PlanWorker's. Without the
  // steps LoadState skips in `epoch` (skip_ranges.h WorkerIdsSkipping).
  Result<std::vector<int64_t>> WorkerIds(int64_t epoch, int64_t sample_in_epoch, int64_t worker,
                                         int64_t num_workers,
                                         std::optional<std::string>* shuffle_warning = nullptr) const;

  // For tools that plan a whole job from one process (sluice bench
  // --plan-only): for each of `workers` (a node, a rank in it and a
  // DataLoader worker of this view's world, num_workers per rank), the ids
  // it reads in `epoch` from its start, what that process's WorkerIds(epoch,
  // 0, ...) gives. Planned together (planner::PlanWorkers): a node's workers
  // cost what one of them costs. `checkpoints`, when given, are
  // EpochCheckpoints(epoch)'s: the draws over the canonical nodes before
  // theirs are then skipped. Errors: a worker out of the world; the planner's.
  Result<std::vector<std::vector<int64_t>>> PeerWorkerIds(std::span<const planner::WorkerAt> workers, int64_t epoch,
                                                          int64_t num_workers,
                                                          const planner::EpochCheckpoints* checkpoints) const;
  // Every worker's ids in `epoch` from its start on another world shape
  // (`num_nodes` x `ranks_per_node` ranks, `num_workers` each), in the order
  // (global rank) x num_workers + worker: what each process of a run on that
  // shape would read (WorkerIds(epoch, 0, ...) there; this dataset's seed,
  // canonical and initial nodes). The shape is a planning world: under
  // replication, its ranks are the groups of replicas (a run's replication
  // is not applied again). The steps LoadState skips in `epoch` are left
  // out as that shape skips them (steps of `batch_size` x its ranks). For
  // an elastic packed resume (engine/packing/pack_segments.h). Errors: a
  // bad shape, skip ranges that are not whole steps of the shape, the
  // planner's.
  Result<std::vector<std::vector<int64_t>>> ShapeWorkerIds(int64_t epoch, int64_t num_nodes,
                                                           int64_t ranks_per_node,
                                                           int64_t num_workers,
                                                           int64_t batch_size) const;
  // planner::PlanCheckpoints of `epoch` (any number of workers), or nullopt
  // when the plan has none to give (not py1e or py1s under random batching).
  Result<std::optional<planner::EpochCheckpoints>> EpochCheckpoints(int64_t epoch) const;

  // The warning Mosaic's shuffle gave while planning the iteration the last
  // successful IterBegin started (planner::PlanWorker), or nullopt: none,
  // or no iteration. Valid until the next IterBegin; not thread-safe (as
  // IterBegin).
  const std::optional<std::string>& shuffle_warning() const { return shuffle_warning_; }

  // Starts iterating (replacing any iteration in progress). Near the end of
  // an epoch the next epoch's plan is made and its first shards opened in
  // the background; IterBegin(epoch + 1, 0, same worker) then starts with
  // them.
  Status IterBegin(int64_t epoch, int64_t sample_in_epoch, int64_t worker, int64_t num_workers);
  // Up to `max` next samples: ids[k] and (*out)[k] for k < the returned count
  // (0 = the epoch is done). `out` is resized to at least the count. Fewer
  // than `max` (but at least one) when a later sample's shard is not open
  // yet: a call waits for its first sample only, so the first sample of a
  // cold epoch comes as soon as its shard is there, and a call never waits
  // while pinning shards (one reader's working set stays one shard, see
  // cache_budget.h). An error is returned by the call whose first
  // sample fails (the samples before it come in full from earlier calls),
  // and again by every later call. Never more than the prefetch window
  // (`predownload` samples) per call.
  Result<size_t> NextBatch(size_t max, int64_t* ids, std::vector<SampleFields>* out);
  // NextBatch's ids without its samples: the same positions, waits and
  // prefetching, for a consumer that reads each id through Get (a
  // binding's subclass with its own __getitem__). The samples are counted
  // as delivered by those Gets, once; a call here counts a batch.
  Result<size_t> NextIds(size_t max, int64_t* ids);
  // Drops the views of the last call (unpins Get's shard; the shards of a
  // NextBatch stay open in the prefetcher until the next NextBatch).
  void Release() {
    held_.clear();
    get_shard_ = SIZE_MAX;
  }

  // Mosaic's state_dict: `rank_samples` is how many samples this rank has
  // consumed since IterBegin (all its workers); sample_in_epoch = the
  // position reached (PositionAfter) from the starting offset after
  // rank_samples * the ranks after replication (world size / replication)
  // samples. With the order record (Order) of its seed and canonical nodes.
  ResumeState State(uint64_t rank_samples) const;
  // Mosaic's load_state_dict: the state's num_canonical_nodes, shuffle_seed
  // and initial_physical_nodes replace the configured ones; its epoch and
  // sample_in_epoch are for the caller's IterBegin. Ends any iteration in
  // progress (NextBatch then needs a new IterBegin).
  // A state with an order record is refused (CompareOrder's
  // kInvalidArgument, nothing changed) when this dataset would not
  // continue its order, but for the parts options.adapt accepts; its world
  // list, with this world appended when it differs, and its skip ranges
  // are kept for the states this run saves. options' skip ranges are
  // added to the state's, for its epoch (skip_ranges.h); the skip ranges
  // ahead of the state's position, and that position, must be whole steps
  // (CheckSkipsAhead). options.skip_sample_ids add the steps that hold
  // those samples after the state's position on this world (StepsHolding).
  // A schedule other than the state's (adapt "schedule" or "sampling")
  // takes over at the state's position, the past kept: the state's past
  // schedules and its own become the plan's mixture_past
  // (ResumedMixturePast), kept in the states this run saves.
  // A state without a record loads as Mosaic's does.
  Status LoadState(const ResumeState& state, const ResumeOptions& options = {});
  // The record of this dataset's order for a state with these seed,
  // canonical nodes and epoch (order_record.h): its streams, sampling
  // options, the worlds this run has been on, and its skip ranges of `epoch`.
  OrderRecord Order(uint64_t shuffle_seed, int64_t num_canonical_nodes, int64_t epoch) const;
  // The position in `epoch` after the job consumed `consumed` samples (all
  // ranks, after replication) from position `start`, skipping what the
  // loaded state and options skip (skip_ranges.h PositionAfter);
  // start + consumed when nothing is skipped.
  int64_t PositionAfter(int64_t epoch, int64_t start, uint64_t consumed) const;

  DatasetCounters counters() const;

  // Every counter of this process's use of the dataset now (see
  // dataset_metrics.h); cheap enough to call every few seconds.
  DatasetMetrics Metrics() const;
  // MetricsJson of the totals and of the window since the previous
  // MetricsReport call (the first: since the dataset opened, or since a
  // forked child first read), with the diagnosis of that window; moves the
  // window on.
  std::string MetricsReport();
  // The counts of `scope` (dataset_metrics.h MetricsScope): kProcess is
  // Metrics(); kJob and kNode first write this process's record
  // (PublishMetrics), then sum the node's records (node_metrics.h), only
  // this dataset instance's for kJob. Their gauges and settings are this
  // process's but for the prefetch lead (SumNodeRecords': the running
  // processes' summed, its mins the least); hosts are merged from the
  // records. With `window`, also the least leads of the batches summed
  // since its previous sum (node_metrics.h NodeLeadWindow). Errors: the
  // node's record folder cannot be made, written or listed (the path
  // named).
  Result<DatasetMetrics> Metrics(MetricsScope scope, NodeLeadWindow* window = nullptr);
  // MetricsReport of `scope`: each scope has its own window.
  Result<std::string> MetricsReport(MetricsScope scope);
  // Writes this process's record of the dataset's counts to the node's
  // folder now (node_metrics.h). NextBatch/NextIds also do, at most once
  // per kNodeRecordPeriod and when a pass ends, and the destructor does
  // for a process that read. Thread-safe.
  Status PublishMetrics();
  static constexpr std::chrono::seconds kNodeRecordPeriod{1};

 private:
  StreamingDataset() = default;
  // Open's steps, in order, after resolving the world: AddStream for each
  // stream, NumberSamples, SummarizeFormatsAndEncodings, CheckCacheLimit,
  // RefuseUnsafeTypes, DerivePlan.
  // What the streams added so far leave for the later steps.
  struct StreamsInOpening {
    std::vector<uint64_t> starts{0};  // cumulative samples per shard (SampleLocator's)
    // Each stream's column encodings, in its shards' column order.
    std::vector<std::vector<std::string>> own_encodings;
  };
  // Opens stream `s`'s remote, loads its index and adds its shards
  // (AddStreamShards); errors name the stream.
  Status AddStream(size_t s, StreamsInOpening* opening);
  // Whether stream `s`'s first shard is guessed beside its index
  // (LoadStreamIndex's `guess`; a Parquet stream's first file's head
  // beside its footers: `piece_guess`): where this process's first sample is
  // likely the head of that shard, read by the peek: stream 0 of an
  // unshuffled dataset, global rank 0, the peek and guess_first_shard on.
  // A shuffled first
  // sample lies anywhere: no guess.
  bool GuessesFirstShard(size_t s) const;
  // Checks that every shard of stream `s` has shard 0's columns and format
  // and records them; counts its samples (at most 2^48 in all).
  Status AddStreamShards(size_t s, const ShardTable& index, const std::string& where,
                         StreamsInOpening* opening);
  // Global sample ids and shards: the locator and the streams' first shards.
  void NumberSamples(std::vector<uint64_t> starts);
  // Each stream's encodings by the dataset's columns, and the format and
  // encodings the streams share (kMixed where they differ).
  void SummarizeFormatsAndEncodings(const std::vector<std::vector<std::string>>& own_encodings);
  // A "pkl" column without allow_unsafe_types: Mosaic's ValueError.
  Status RefuseUnsafeTypes() const;
  // The plan's epoch size, canonical nodes and replicated world.
  Status DerivePlan();
  // cache_limit must pass Mosaic's checks (CheckMosaicCacheLimit) when
  // options_.mosaic_cache_limit_checks, and hold the minimal working set of
  // one reader of every cached stream (cache_budget.h): else
  // kInvalidArgument with the numbers. Sets stream_limits_ (each cached stream's share of cache_limit).
  Status CheckCacheLimit();
  planner::PlanRequest Request(int64_t epoch, int64_t sample_in_epoch, int64_t num_workers) const;
  // Where the node's processes share each epoch's plan checkpoints
  // (node_checkpoints.h): the first stream's cache state folder.
  NodeCheckpointsPlace CheckpointsPlace() const;
  // The steps of `epoch` (skip_ranges.h's: every rank's k-th batch) from
  // position `start` on that hold the samples `ids` (every step holding
  // one, where a mixture reads it more than once), each as [k, k + 1),
  // on this world and planning options. Plans every rank's order of the
  // epoch from `start`, a node at a time. kInvalidArgument naming an id
  // that no rank reads after `start`, or when `start` is not a whole step.
  Result<StepRanges> StepsHolding(int64_t epoch, int64_t start, const std::vector<int64_t>& ids) const;
  Status EnsureProcess();
  // Shards the prefetcher opens at once (DatasetOptions::fetch_concurrency)
  // for one of `num_workers` workers of each rank of the node.
  size_t OpenThreads(int64_t num_workers) const;
  // A pass's prefetch window: predownload, within [1, own + 1] (`own`: the
  // worker's plan size).
  size_t PassPrefetchWindow(int64_t own) const;
  // How far past its window a pass in windows looks ahead, at most
  // (PrefetchSchedule::LookAheadReach of the largest shard).
  size_t PassLookAhead(const IterationOptions& iteration) const;
  // The bytes of shards a pass holds for a use beyond its window
  // (IterationOptions::hold_bytes): single_pass_memory (a reader's share
  // of the node's); unset when no stream is read in a single pass.
  std::optional<uint64_t> PassHoldBytes(int64_t num_workers) const;
  // The node's reader processes: its ranks times each rank's `num_workers`
  // (at least one each), every one with its own requests and shards.
  uint64_t NodeReaders(int64_t num_workers) const;
  // Raw files: 16 per reader, but no more than 64 per node in all while
  // each reader keeps 2 (e.g. 4 with 8 ranks of 2 workers).
  static constexpr size_t kRawFileFetchConcurrency = 16;
  static constexpr size_t kNodeFileFetchConcurrency = 64;
  static constexpr size_t kMinFileFetchConcurrency = 2;
  // One shard's download runs its parts in parallel, but each starts with a
  // lone first part and ends with a tail: a few shards at once keep the link
  // busy across those gaps and across each part's time to first byte.
  static constexpr size_t kShardFetchConcurrency = 4;
  // Global shard of a global sample id, and the sample's index in it.
  std::pair<size_t, uint32_t> Locate(uint64_t id) const;

  DatasetOptions options_;
  ResolvedWorld world_;
  std::vector<std::shared_ptr<const ShardTable>> indexes_;
  // Per stream: the bytes of its index.json (0: its index has none).
  std::vector<uint64_t> index_json_bytes_;
  std::vector<std::shared_ptr<RemoteSource>> remotes_;
  // Per stream: its first shard's head read on a guess beside its index
  // (LoadStreamIndex's `guess`; null when not), until the shards are opened
  // and keep it. After remotes_, whose sources their reads use.
  std::vector<std::unique_ptr<GuessedHead>> guessed_heads_;
  // Per stream: its first Parquet file's head read on a guess beside its
  // footers (LoadStreamIndex's `piece_guess`; null when not), until the
  // shards are opened and keep it. After remotes_, as guessed_heads_.
  std::vector<std::unique_ptr<GuessedPieceHead>> guessed_pieces_;
  std::vector<size_t> stream_first_shard_;  // + total at the end
  // Global sample id -> global shard; shared with the iteration cursor.
  std::shared_ptr<const SampleLocator> locator_ = std::make_shared<SampleLocator>();
  DatasetColumns columns_;
  std::vector<std::string> column_encodings_;
  std::string format_;
  std::vector<std::string> stream_formats_;                 // per stream
  std::vector<std::vector<std::string>> stream_encodings_;  // per stream, per column
  std::vector<std::optional<uint64_t>> stream_limits_;  // per stream; nullopt = no limit
  int64_t epoch_size_ = 0;
  int64_t num_canonical_nodes_ = 0;
  int64_t initial_physical_nodes_ = 0;
  int64_t parallel_nodes_ = 0;  // nodes and ranks after replication
  int64_t parallel_ranks_ = 1;

  pid_t pid_ = 0;  // the process that owns shards_ and cursor_
  std::unique_ptr<DatasetShards> shards_;
  // Declared after shards_: goes first (its threads open shards_'s shards).
  std::unique_ptr<IterationCursor> cursor_;
  // Per stream: IndexFingerprint of its index, made when Order first asks
  // (one thread at a time, as every method): a pass over every shard's
  // name and size, ~0.4k instructions a shard (0.13 s at the end of a
  // million-file first open), that a process saving and loading no state
  // never needs.
  mutable std::vector<std::optional<std::string>> index_fingerprints_;
  // The worlds this run has been on (the loaded state's, then this one when
  // it differs) and the skip ranges of the loaded state and options, merged.
  std::vector<WorldShape> worlds_;
  std::vector<SkipRange> skips_;
  // Where State() counts from: the last IterBegin's or LoadState's place.
  int64_t state_epoch_ = 0, state_start_ = 0;
  std::optional<std::string> shuffle_warning_;  // of the iteration cursor_ walks
  std::vector<std::shared_ptr<const OpenedShard>> held_;
  size_t get_shard_ = SIZE_MAX;  // the global shard held_ holds for Get
  // The consumer's counters: written by the one thread that reads, a few
  // relaxed stores per call (not per sample); read by Metrics().
  struct ConsumerCounters {
    std::atomic<uint64_t> samples{0}, bytes{0}, batches{0}, lead{0}, samples_skipped{0};
    std::atomic<uint64_t> wait_total{0}, wait_download{0}, wait_peer{0}, wait_room{0},
        wait_decode{0}, wait_other{0};
    std::atomic<uint64_t> lead_shards{0}, lead_samples_sum{0}, lead_shards_sum{0};
    // The least lead of a batch since open, and since the last process
    // report (UINT64_MAX: no batch); the report resets the latter.
    std::atomic<uint64_t> lead_samples_min{UINT64_MAX}, lead_shards_min{UINT64_MAX},
        window_lead_samples_min{UINT64_MAX}, window_lead_shards_min{UINT64_MAX};
    // ... and since the last node record (PublishMetrics closes the period).
    std::atomic<uint64_t> record_lead_samples_min{UINT64_MAX},
        record_lead_shards_min{UINT64_MAX};
  };
  void Publish(const ConsumerWaits& waits);
  // NextBatch, or NextIds with `out` null.
  Result<size_t> Next(size_t max, int64_t* ids, std::vector<SampleFields>* out);
  // In a new process (fork): counts from zero, the window from now.
  void ResetCounters();
  ConsumerCounters consumer_;
  std::chrono::steady_clock::time_point opened_at_ = std::chrono::steady_clock::now();
  int64_t open_threads_ = 0;  // of the last IterBegin
  // Where each scope's MetricsReport window starts (by MetricsScope), and
  // the job's and node's windows over the records (their least leads).
  DatasetMetrics last_reports_[3];
  NodeLeadWindow lead_windows_[3];
  // The node's records (node_metrics.h): this instance's random number
  // (made at Open, kept by forked copies, so a job's workers share it), the
  // record folder once made, and the hosts' HTTP counts this process had
  // when its counting began (a forked child inherits its parent's, which
  // the parent's record holds).
  uint64_t instance_ = 0;
  std::mutex node_mu_;
  std::string node_dir_;  // guarded by node_mu_
  std::vector<HostStatsSnapshot> host_base_;  // guarded by node_mu_
  pid_t host_base_pid_ = 0;                  // whose counts host_base_ holds; node_mu_
  // The least leads after each of this process's records; node_mu_.
  LeadMinima record_lead_samples_, record_lead_shards_;
  // host_base_ := the hosts' counts now, of this process.
  void RebaseHostCounts();
  void RebaseHostCountsLocked();  // node_mu_ held
  // CLOCK_MONOTONIC_COARSE ns when Next writes the record next (the
  // consumer's thread; PublishMetrics moves it on).
  std::atomic<uint64_t> next_publish_ns_{0};
};

}  // namespace sluice

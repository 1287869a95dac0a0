// The options of a streaming dataset, mirroring Mosaic's StreamingDataset
// and Stream arguments and defaults, and their JSON form (the text the C ABI
// takes). Plain values; the parser is a pure, thread-safe function.
#pragma once

#include <chrono>
#include <cstdint>
#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "engine/planner/plan.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_encoding.h"
#include "formats/raw/file_listing.h"

namespace sluice {

// A raw-file stream (formats/raw/): its files are its samples, one per
// shard, indexed from a listing instead of an index.json.
struct FileDatasetOptions {
  FileSelection selection;  // globs (file_listing.h); empty = every file
  // "" = list the store (or walk the local folder) under the stream's root;
  // else the key (relative to the root) of a manifest naming the files
  // (ParseFileManifest), for stores that cannot list (https://).
  std::string manifest;
  // "parquet" only (key "columns"): the top-level columns to read, in the
  // order a sample's fields take; empty = all. A remote stream then
  // fetches only their column chunks (parquet_stream_index.h).
  std::vector<std::string> columns;
};

// One Stream(remote=, local=, split=, proportion=|repeat=|choose=, ...).
struct StreamOptions {
  std::string remote;  // store URL or path; "" = none (local-only)
  std::string local;   // cache folder; required
  std::string split;   // "" = none
  planner::StreamWeight weight;
  int download_retry = 2;
  double download_timeout_s = 60.0;
  // A server's silence that makes a request give up and retry (Sluice's
  // extension, key "read_timeout", seconds; StoreOptions::read_timeout_s).
  double read_timeout_s = 30.0;
  std::optional<std::string> validate_hash;  // algorithm name, e.g. "sha1"
  bool keep_zip = false;
  // The single-pass mode (Sluice's extension, key "single_pass"; only for
  // a stream with a remote): each shard's files are received into memory
  // and its samples read from there, nothing of them written under
  // `local` (no shard files, no cache state); a shard's memory goes once
  // the reader has passed it. See StreamShards ("Single pass") and
  // docs/configuration.rst. For a job that reads the dataset once.
  // StreamingDataset sets it to ReadsInSinglePass as it adds the stream:
  // false for a local-only stream, so every later reader takes the flag.
  bool single_pass = false;
  // A single pass's shard of this many bytes or more (its read asks for
  // one byte past it) is received as several ranged parts at once, each on
  // its own connection and written at its place in the shard's one buffer
  // (stores/common/ranged_parts.h; a part per this many bytes, rounded up,
  // fewer and larger when capped: at most the store's parts in flight per
  // object, StoreOptions::concurrency, or its local_concurrency from a
  // server that answers as if local, and at most the connections free:
  // RangedPartCount decides); 0: one request a shard. Through a
  // link that gives each connection its own share (15 ms, 100 MB/s per
  // connection: bench/python/cold_epoch.py's proxy), one request a 64 MiB
  // shard held the consumer at one connection's speed. Sluice's extension,
  // key "single_pass_part_size" (bytes, 0 or more); the dataset-level key
  // is every stream's default.
  uint64_t single_pass_part_size = uint64_t{8} << 20;
  // Set: a raw-file stream (key "files"; Sluice's extension).
  std::optional<FileDatasetOptions> files;
  // Set: a stream of Parquet files (key "parquet": true or {"glob",
  // "manifest"}; Sluice's extension), one shard per row group, one sample
  // per row, indexed from the files' footers (engine/dataset/
  // parquet_stream_index.h); no globs = names ending in ".parquet". Unset,
  // a stream whose root has no index.json but Parquet files is one too
  // (LoadStreamIndex decides). Not beside `files`.
  std::optional<FileDatasetOptions> parquet;

  // Whether the stream reads from a remote (else its files are read in
  // place under `local`). The one statement of that rule: opening the
  // remote, the single-pass choice and the names errors give all ask it.
  bool has_remote() const { return !remote.empty(); }
};

// Where this process sits: torchrun's RANK/WORLD_SIZE/LOCAL_RANK/
// LOCAL_WORLD_SIZE, or explicit values (any field given: the environment is
// not read, and the fields not given take their defaults).
struct WorldOptions {
  std::optional<int64_t> rank, world_size, local_rank, local_world_size;
};

// The world resolved: num_nodes = world_size / local_world_size,
// node = rank / local_world_size, rank_in_node = local_rank
// (= rank % local_world_size).
struct ResolvedWorld {
  int64_t num_nodes = 1;
  int64_t ranks_per_node = 1;
  int64_t node = 0;
  int64_t rank_in_node = 0;
  int64_t global_rank = 0;
  int64_t world_size = 1;
  // Not empty when WORLD_SIZE > 1 came from the environment without RANK
  // (PyTorch Lightning's own launcher sets WORLD_SIZE and LOCAL_RANK, not
  // RANK): every such process takes itself for rank 0 and reads rank 0's
  // samples, silently, as Mosaic does. The text names the variables and the
  // fix; the bindings show it (Python: sluice.world, warnings.warn).
  std::string unranked_warning;
};

struct DatasetOptions {
  std::vector<StreamOptions> streams;
  // epoch_size, sampling_method, sampling_granularity, partition_algo,
  // num_canonical_nodes, batch_size (None -> 1, as Mosaic), shuffle,
  // shuffle_algo, shuffle_seed, shuffle_block_size, batching_method,
  // replication: Mosaic's defaults (see planner::PlanConfig); mixture
  // (Sluice's extension: a schedule of stream weights, PlanConfig::mixture).
  planner::PlanConfig plan;
  std::optional<int64_t> predownload;  // None -> 8 * batch_size
  // None = no limit. One limit over all streams' cache folders together, as
  // Mosaic's: each stream with a remote gets a fixed share (its minimal
  // working set, then the rest in proportion to its size; see
  // cache_budget.h); local-only streams are read in place and count nothing.
  std::optional<uint64_t> cache_limit;
  // Also Mosaic's own checks of cache_limit (CheckMosaicCacheLimit: above
  // the index.json files, at least four times the largest shard), with its
  // texts; key "mosaic_cache_limit_checks" (the Python package sets it, as
  // its users expect Mosaic's errors). Without it only the working set
  // counts, so a limit may hold as little as one shard at a time.
  bool mosaic_cache_limit_checks = false;
  bool allow_unsafe_types = false;
  // The MDS encodings the caller decodes itself (its users' own); Open
  // refuses any other encoding that is not built in. Keys
  // "custom_encodings" (a list of names) and "any_custom_encoding" (bool:
  // every name that is not built in is the caller's; the Python package,
  // which fails when such a sample is read, as Mosaic does).
  CustomEncodings custom_encodings;
  WorldOptions world;
  // Bound on every wait on other processes (index download, shard fetches,
  // room in the cache); Sluice's extension, key "wait_timeout".
  std::chrono::milliseconds wait_timeout{std::chrono::seconds(120)};
  // Open the next epoch's first shards near the end of an epoch; Sluice's
  // extension, key "prefetch_next_epoch" (tests that count fetches exactly
  // turn it off).
  bool prefetch_next_epoch = true;
  // A pass's first sample, when its shard is uncompressed MDS (or a Parquet
  // row group's piece: read once, in memory, for the peek and the shard),
  // not cached and not checked by hash, may come from one or two ranged reads raced against
  // the shard's download, or, a pass planned at its start, while the rest
  // of its plan is made ("Head first", see IterationCursor); Sluice's extension, key
  // "peek_first_sample". False: it waits for the shard (exactly one request
  // per shard, as tests that count requests on the wire want).
  bool peek_first_sample = true;
  // How long that peek has the link to itself before the shard's download
  // starts beside it (IterationOptions::peek_head_start; no config key:
  // tests set it).
  std::chrono::milliseconds peek_head_start{50};
  // With peek_first_sample, a cold unshuffled stream 0 (rank 0) reads its
  // first shard's head by Mosaic's name beside its index.json
  // (StreamingDataset::GuessesFirstShard, GuessedHead); key
  // "guess_first_shard". A process that opens the dataset and reads nothing
  // itself (a DataLoader's parent with workers) hands the bytes to the
  // workers it forks (GuessedHead), so its request is the reading worker's.
  bool guess_first_shard = true;
  // The consumer's next sample, when its shard is uncompressed MDS being
  // downloaded by this process from a remote that reports its fills
  // (RemoteSource::ReportsFills: the HTTP stores, not a folder) and the
  // stream has no validate_hash, is
  // read from the download as soon as its offsets entry and bytes have
  // arrived, before the rest of the shard (StreamShards::ReadInFlight);
  // key "serve_in_flight", the one owner of the choice for the cached
  // mode and the single pass alike. A single pass's shard is received in
  // ranged parts (single_pass_part_size) in any order: a sample is served
  // once the parts holding its offsets entry and its bytes are all in,
  // whatever of the parts before or after them is not. Such a sample is
  // exactly the bytes the server sent for its range, unchecked as a whole:
  // no hash has been checked (a stream with validate_hash is always
  // strict, so no such sample exists there), nor the shard's size, nor
  // that its parts are of one version. A shard that then fails (cut
  // short, a wrong size, a part's error) is an error at the next batch,
  // naming its URL (a failed part: its byte range), and nothing of it
  // stays in the cache, but the samples handed out are not taken back.
  // False (the strict mode): every sample waits for its whole shard and
  // its checks (size, and validate_hash's hash). On by default: a shard
  // served in flight is opened once (the first shard's early open is the
  // prefetcher's, IterationCursor), so it counts once, as one download or
  // one hit.
  bool serve_in_flight = true;
  // The memory a pass may hold of shards received in a single pass
  // (ReadsInSinglePass) for a later use beyond its prefetch window: a
  // shard the reader passed stays in memory until its next use in the
  // worker's order while the shards so held fit (each counted at its
  // files' bytes; when one does not fit, those worth least go first, by
  // samples left per byte and per position to their next use:
  // PrefetchSchedule::Options::hold_room), and a shard that goes has its
  // later samples read by ranged requests, those of its next uses ahead
  // of the reader (StreamShards::OpenRangedShard, OpenedShard::FillAhead;
  // a shard whose format cannot be
  // read so, compressed or with a meta file, is received again). py1e (Mosaic's
  // default shuffle) spreads a shard's samples over a block of
  // shuffle_block_size samples, by default wider than most datasets' share
  // of a worker, so a shuffled single pass would otherwise receive each
  // shard several times. Sluice's extension, key "single_pass_memory"
  // (bytes, 0 or more, or a "4gb"-style string; 0: none held). None:
  // single_pass_memory_bytes()'s default.
  std::optional<uint64_t> single_pass_memory;
  // A pass whose worker plan has more ids than this is planned and read in
  // windows of this many ids (IterationCursor's "In windows": memory of a
  // few windows, not of the epoch); smaller ones hold their whole plan.
  // Sluice's extension, key "pass_window_ids" (>= 1; tests set a tiny one).
  int64_t pass_window_ids = int64_t{1} << 20;
  // A shard file that is still corrupt (wrong size, hash mismatch, bad
  // compressed data) after 1 + download_retry downloads: false = the error
  // (naming the shard, its URL and what was expected) ends the iteration;
  // true = iteration skips the shard's samples and counts them
  // (DatasetCounters::shards_skipped/samples_skipped). Random access (Get)
  // to a skipped shard's sample is still an error. Sluice's extension, key
  // "skip_corrupt_shards" (bool).
  bool skip_corrupt_shards = false;
  // A raw-file stream's file that is missing or unreadable (kNotFound,
  // kPermissionDenied) or changed size since it was listed: false = the
  // error naming the file ends the iteration; true = iteration skips it and
  // counts it as skip_corrupt_shards counts shards. Key
  // "skip_missing_files" (bool).
  bool skip_missing_files = false;
  // Shards (files) one reader opens at once, downloads included; Sluice's
  // extension, key "fetch_concurrency". None: for a raw-file stream 16, or
  // 64 shared by the node's readers (ranks x workers) when fewer, at least
  // 2; when every stream that downloads is a single pass in order, 2 (a
  // shard-sized buffer each: StreamingDataset::OpenThreads); else 4 (a few
  // shards at once keep the link full between them). Without a cache_limit the
  // reader keeps that many shards opened or opening ahead of it, beyond the
  // predownload window too. Under a cache_limit (whose budget counts one
  // open shard per reader) only within the window, and only the next
  // sample's shard waits for room: the others are opened when there is
  // room without waiting, so the limit holds and no reader waits for room
  // while its own extra shards are pinned. Other readers' extras are
  // another matter (one whose consumer is not called keeps them pinned), so
  // under a cache_limit the default is 1 unless the node has one reader; a
  // value set here applies as given, and then a reader may wait up to
  // wait_timeout for room another reader's extras hold.
  std::optional<int64_t> fetch_concurrency;
  // How long the node's records of ended processes are kept (seconds, 0 or
  // more; node_metrics.h). None: $SLUICE_METRICS_RETENTION_S, else 24 h.
  // Sluice's extension, key "metrics_retention_s".
  std::optional<int64_t> metrics_retention_s;
  // An index.json of at least this many bytes is turned into a binary index
  // in the node's cache state folder by the node's first process, and
  // mapped by every process (stream_index.h); smaller ones are parsed by
  // each process, which costs less than the file. Not a key: tests set 0.
  uint64_t binary_index_from_bytes = uint64_t{1} << 20;
  // The file system every file of the dataset is written and read through
  // (base/env.h): the shard caches, the remotes' downloads (StoreOptions::env),
  // the node's index files. Not a key: tests give a fault-injecting one
  // (tests/base/fault_env.h). Must outlive the dataset.
  Env* env = Env::Default();

  int64_t batch_size() const { return plan.batch_size.value_or(1); }
  // single_pass_memory (a reader process's), or by default a quarter of
  // the memory a process may use (planner::ProcessMemoryLimit; 4 GiB when
  // no limit is known) shared by the node's `readers` reader processes
  // (its ranks times each rank's workers: every one holds its own), at
  // most kSinglePassMemoryCap each.
  uint64_t single_pass_memory_bytes(uint64_t readers = 1) const;
  static constexpr uint64_t kSinglePassMemoryCap = uint64_t{16} << 30;
  int64_t predownload_samples() const {
    int64_t b = batch_size();
    return predownload.value_or(b > INT64_MAX / 8 ? INT64_MAX : 8 * b);
  }
};

// Whether `stream` is read in a single pass: it asks for single_pass and
// has a remote. A stream without one is read in place, single_pass or not,
// exactly as without it (its files have a local path, cache_limit counts
// its index.json). The one statement of that rule (docs/ownership.rst).
bool ReadsInSinglePass(const StreamOptions& stream);

// Parses {"streams": [{"remote", "local", "split", "proportion" | "repeat" |
// "choose", "download_retry", "download_timeout", "validate_hash",
// "keep_zip", "single_pass", "single_pass_part_size"}, ...], "epoch_size", "predownload", "cache_limit" (int or
// "100gb"-style string), "sampling_method", "sampling_granularity",
// "partition_algo", "num_canonical_nodes", "batch_size", "shuffle",
// "shuffle_algo", "shuffle_seed", "shuffle_block_size", "batching_method",
// "replication", "allow_unsafe_types", "custom_encodings" (list of names),
// "any_custom_encoding" (bool), "mosaic_cache_limit_checks" (bool),
// "wait_timeout" (seconds),
// "prefetch_next_epoch" (bool), "peek_first_sample" (bool), "guess_first_shard" (bool),
// "serve_in_flight" (bool), "single_pass_memory" (bytes or "4gb"-style string),
// "pass_window_ids" (>= 1),
// "skip_corrupt_shards" (bool),
// "skip_missing_files" (bool), "fetch_concurrency" (1..256),
// "metrics_retention_s" (an integer >= 0), per stream
// "files" and "parquet" (each true or {"glob", "manifest"}; not both),
// "world": {"rank", "world_size", "local_rank", "local_world_size"},
// "mixture" ([[samples seen, [weight per stream, ...]], ...]; Sluice's
// extension, planner::MixtureSchedule) and "mixture_interpolation"
// ("step", the default, or "linear")}.
// Without "streams", top-level "remote"/"local"/"split" and the per-stream
// keys make the one stream (Mosaic's single-stream form). null = default.
// Unknown keys, wrong types, bad names or values -> kInvalidArgument naming
// the key.
Result<DatasetOptions> ParseDatasetOptions(std::string_view json);

// A "mixture" value ([[samples seen, [weight per stream, ...]], ...]) as a
// schedule (step interpolation), its shape checked (kInvalidArgument naming
// `key`); the planner checks the values. Also reads the schedules a resume
// state's order record holds (order_record.h).
Result<planner::MixtureSchedule> ParseMixturePoints(const JsonValue& v, std::string_view key);

// The "world" object of a dataset config alone (a JSON object with the
// keys above, each an integer or null), for the bindings
// (sluice_world_resolve). Errors as ParseDatasetOptions'.
Result<WorldOptions> ParseWorldOptions(std::string_view json);

// Explicit values (when any field is given, the environment is not read),
// else the environment (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, LOCAL_RANK, as
// torchrun sets them); then Mosaic's defaults: rank 0 of 1, one rank per
// node (LOCAL_WORLD_SIZE unset: every rank is a node, as Mosaic's
// World.detect). The one owner of that rule: the bindings ask it
// (sluice_world_from_env, sluice_world_resolve, sluice_world_env_warning).
// A variable that is set but not an integer, or inconsistent values
// (rank >= world_size, world_size not a multiple of local_world_size, ...)
// -> kInvalidArgument. WORLD_SIZE > 1 without RANK is no error (Mosaic's
// rule) but sets ResolvedWorld::unranked_warning.
Result<ResolvedWorld> ResolveWorld(const WorldOptions& world);

}  // namespace sluice

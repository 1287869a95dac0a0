// Every stream's shards of a dataset, numbered globally (stream 0's first,
// as Mosaic does), opened through each stream's StreamShards, with the
// dataset's skipping rules: a shard that fails as corrupt
// (skip_corrupt_shards), or a raw file that is missing or unreadable
// (skip_missing_files), is remembered and opens as OpenedShard::Skipped().
//
// It is what the iteration's prefetch threads call to open a shard, so
// those threads never reach into the dataset itself.
//
// Thread-safe. Fork: belongs to the process that opened it, like its
// StreamShards; a forked child opens its own (passing on `skipped()`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/opened_shard.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/stream_shards.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {

// The stream holding global shard `g`, given each stream's first global
// shard and the total last (`first_shard`, non-decreasing).
size_t StreamOfShard(const std::vector<size_t>& first_shard, size_t g);

class DatasetShards {
 public:
  // Opens every stream's StreamShards: indexes[s], remotes[s] (null for a
  // local-only stream) and limits[s] (the stream's share of cache_limit)
  // per stream of options.streams; first_shard[s]: stream s's first global
  // shard, the total last. `skipped`: global shards already given up (by
  // this dataset in the process forked from). The indexes and remotes must
  // outlive the object. Errors name the stream.
  static Result<std::unique_ptr<DatasetShards>> Open(
      const DatasetOptions& options, const std::vector<std::shared_ptr<const ShardTable>>& indexes,
      const std::vector<std::shared_ptr<RemoteSource>>& remotes,
      const std::vector<std::optional<uint64_t>>& limits, std::vector<size_t> first_shard,
      size_t num_columns, std::unordered_set<size_t> skipped = {});

  // Global shard `g` pinned and mapped (or Skipped(), see above); `cancel`
  // and `wait` as StreamShards::OpenShard's (with `wait` false, null when
  // the shard cannot be had without waiting). A shard still open elsewhere
  // (an iteration's prefetcher, a Get) is that same object, not mapped
  // again. Thread-safe. `consumer_waits`: the consumer waits for this
  // open's first read (an iteration's first shard), so the format may
  // defer work past it (OpenedShard::Open's: a Parquet group decodes as its
  // rows are read); never with skip_corrupt_shards, whose shards must fail
  // at their open, before any of their samples is handed out. A shard
  // still open elsewhere is that object, however it was opened.
  Result<std::shared_ptr<const OpenedShard>> Open(size_t g,
                                                  const std::atomic<bool>* cancel = nullptr,
                                                  bool wait = true, bool consumer_waits = false);
  // Tests only: the object Open last gave out for `g` while someone holds
  // it (null when none); opens nothing.
  std::shared_ptr<const OpenedShard> HeldForTesting(size_t g);

  // Whether opening global shard `g` decodes its rows
  // (StreamShards::OpenDecodes): the one answer an iteration's prefetcher
  // asks before holding its other opens behind a pass's first shard.
  bool OpenDecodes(size_t g) const;
  // Global shard `g` for the rest of a single pass that let it go before
  // its last use: an open one (held by another reader) as it is, else
  // opened for ranged reads of its samples (StreamShards::OpenRangedShard)
  // or, where that cannot be, as Open opens it.
  Result<std::shared_ptr<const OpenedShard>> OpenRanged(size_t g);
  // The bytes global shard `g` takes when a single pass holds it in
  // memory (StreamShards::HeldBytes). Thread-safe.
  uint64_t HeldBytes(size_t g) const;
  // Whether global shard `g`'s samples may be peeked
  // (StreamShards::Peekable); never with skip_corrupt_shards (the shard
  // might turn out skipped, and its samples must then not have been read).
  bool Peekable(size_t g);
  // Sample `i` of global shard `g` peeked from its remote
  // (StreamShards::PeekSample); for a Peekable shard. `cancel`: as
  // PeekSampleFromRemote's.
  Result<PeekedSample> PeekSample(size_t g, uint32_t i, std::stop_token cancel = {});
  // Stream `s`'s guessed first-shard head (StreamShards::KeepGuessedHead).
  void KeepGuessedHead(size_t s, std::unique_ptr<GuessedHead> guessed) {
    if (s < streams_.size()) streams_[s]->KeepGuessedHead(std::move(guessed));
  }
  // Stream `s`'s guessed first Parquet file's head
  // (StreamShards::KeepGuessedPieceHead).
  void KeepGuessedPieceHead(size_t s, std::unique_ptr<GuessedPieceHead> guessed) {
    if (s < streams_.size()) streams_[s]->KeepGuessedPieceHead(std::move(guessed));
  }
  // The peek of global shard `g` is over (StreamShards::PeekDone).
  void PeekDone(size_t g);

  // Sample `i` of global shard `g` from its download in flight in this
  // process (StreamShards::ReadInFlight); nullopt with serve_in_flight
  // off, and with skip_corrupt_shards or skip_missing_files (the shard
  // might turn out skipped, and its samples must then not have been read).
  Result<std::optional<PeekedSample>> ReadInFlight(size_t g, uint32_t i, bool wait,
                                                   std::stop_token stop = {},
                                                   bool* blocked = nullptr);
  // Whether ReadInFlight may ever serve a sample of `g` (its download in
  // this process would be published: StreamShards::MayServeInFlight).
  bool MayServeInFlight(size_t g) const;

  // The global shards skipped so far (a copy).
  std::unordered_set<size_t> skipped() const;
  size_t skipped_count() const;
  const std::vector<std::unique_ptr<StreamShards>>& streams() const { return streams_; }

 private:
  DatasetShards() = default;
  // Shard g as another open left it: Skipped() where it was skipped, the
  // opened shard while one is held (open_), else null.
  std::shared_ptr<const OpenedShard> AlreadyHad(size_t g);
  // Whether a failure to open a shard of `stream` skips it.
  bool Skippable(size_t stream, const Status& s) const;

  std::vector<std::unique_ptr<StreamShards>> streams_;
  std::vector<size_t> first_shard_;
  std::vector<bool> files_;  // per stream: a raw-file stream
  bool skip_corrupt_ = false;
  bool skip_missing_ = false;
  size_t num_columns_ = 0;
  mutable std::mutex skipped_mu_;
  std::unordered_set<size_t> skipped_;
  // Per global shard, the object Open last gave out, while someone holds
  // it: reads by id in a shuffled pass (a subclass's __getitem__) share
  // the prefetcher's maps instead of mapping a 64 MiB shard per sample.
  std::mutex open_mu_;
  std::vector<std::weak_ptr<const OpenedShard>> open_;
};

}  // namespace sluice

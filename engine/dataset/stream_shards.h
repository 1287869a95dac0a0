// The shards of one stream on this node: its index, its ShardCache (rooted at
// <local>/<split>, shared by every process of the node) and where missing
// files come from.
//
// Each shard file the readers need (raw_data, and raw_meta for JSONL/XSV) is
// one cache entry named by its index basename (the row groups of a Parquet
// file read in place share their file's entry; from a remote each group is
// a piece of its own, ShardEntry::piece, fetched by ranged GETs of the
// parts PieceParts cuts, all at once, with the node's stored footer
// appended). Fetching one downloads the
// stored file (zip_data/zip_meta when compressed, else the raw file) from the
// remote, checks `validate_hash` when set (on the stored file, as Mosaic
// does), decompresses it into the cache's temp file and, with `keep_zip`,
// leaves the download (the fetch's scratch file) for the cache to keep as the
// entry's companion. Both count under cache_limit: the download (the
// fetch's scratch file) while the shard is fetched, the kept zip (the cache
// entry's companion) while it is present, as Mosaic counts keep_zip. A
// local-only stream reads its folder in place, writing nothing there: its
// present files are mapped as they are (no cache state); only a missing raw
// file is decompressed from its zip in the folder, through a ShardCache
// (one decompression per node) opened then; nothing is ever evicted.
//
// Single pass (ReadsInSinglePass: single_pass and a remote): no
// ShardCache at all. OpenShard receives the shard's files into memory
// (RemoteSource::FetchToMemory; a compressed one decompressed there),
// checks them as a fetch does (size, validate_hash on the stored bytes
// before anything is read from them, a corrupt download received again up
// to 1 + download_retry times) and hands out an OpenedShard that owns the
// bytes: nothing is written under the stream's folder for a shard, and the
// memory goes with the last holder of the shard (the prefetcher's window
// and the consumer). No cache_limit applies to it and no process of the
// node shares it. With ServeInFlight, an uncompressed data file of a
// SamplePeekable format with no meta file, of a stream without
// validate_hash, is published as its ranged parts arrive (an ArrivedBytes
// per attempt over the attempt's buffer; a later attempt abandons the
// earlier's), and ReadInFlight reads its samples from the parts in; the
// receive's outcome ends it, so a reader waiting for bytes that never
// came gets the receive's error (URL and range). A Parquet row group's
// piece is received as ReadPiece reads it (its columns' chunks, then its
// file's footer tail from the node's footer store): the stream's index
// (listing and footer store under .sluice/, made once per node) is kept as
// an MDS stream keeps its index.json, so the node's processes and later
// runs read no footer again.
// A receive's error names the stream's root and the shard ("single pass
// '<root>': receiving shard N '<name>'"), as the cache's fetch names its own.
//
// With validate_hash, a cached file is also checked against its recorded raw
// hash the first time this process opens it; a mismatch deletes it and
// fetches it again (once), so a corrupt cache heals instead of failing.
//
// Thread-safe. Fork: belongs to the process that opened it (see ShardCache).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/arrived_bytes.h"
#include "base/fill_watermark.h"
#include "base/retry_policy.h"
#include "base/status.h"
#include "engine/cache/shard_cache.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/guessed_piece_head.h"
#include "engine/dataset/opened_shard.h"
#include "engine/dataset/parquet_footer_source.h"
#include "engine/dataset/piece_parts.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/sample_peek.h"
#include "engine/dataset/shard_buffer_pool.h"
#include "engine/dataset/shard_bytes.h"
#include "engine/dataset/shard_items.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {

// kCorrupt or kHashMismatch: stored bytes that are not what index.json says.
bool IsCorruption(const Status& s);
// Whether another download of a shard's file may heal the failure `s` of
// one: not when the object is missing, the request is wrong, or the store
// said the object is not the one the index describes (IsObjectChangedError:
// another size or version, which every attempt reads again). The rule of
// a failed download's retries (download_retry).
bool DownloadMayHeal(const Status& s);
// A corruption (IsCorruption) that DownloadMayHeal: the rule of a corrupt
// download's retries (1 + download_retry downloads in all), and of the
// first sample's peek (IterationCursor), whose corruption that no download
// heals ends the pass at once.
bool CorruptionMayHeal(const Status& s);

class StreamShards {
 public:
  // `index` as LoadStreamIndex returned it; `remote` null for local-only.
  // cache_limit: this stream's share of the dataset's limit, for its folder
  // (None = unlimited).
  static Result<std::unique_ptr<StreamShards>> Open(const StreamOptions& stream,
                                                    std::shared_ptr<const ShardTable> index,
                                                    std::shared_ptr<RemoteSource> remote,
                                                    std::optional<uint64_t> cache_limit,
                                                    std::chrono::milliseconds wait_timeout,
                                                    Env* env = Env::Default());

  // Makes shard `shard` present (fetching what is missing), pins and maps it.
  // A file whose download is corrupt is downloaded again (CorruptionMayHeal),
  // up to 1 + download_retry times in all; then the error (IsCorruption) names the
  // file, its URL and the expected size (and hash with validate_hash). A
  // Parquet row group read from a remote is not fetched again when corrupt:
  // its ranged reads ask for the version listed, so the error (e.g.
  // ObjectVersionChangedError: file, row group, range, both ETags) comes
  // after one fetch.
  // `cancel` (optional) ends waits on other processes and for room with
  // kCancelled (see ShardCache::Acquire). With `wait` false, nothing waits
  // for room under cache_limit or for another process's fetch that has not
  // reserved its room (ShardCache::TryAcquire): a null shard ("not now")
  // instead, nothing of it pinned. `consumer_waits`: as OpenedShard::Open's.
  Result<std::unique_ptr<OpenedShard>> OpenShard(size_t shard, size_t num_columns,
                                                 const std::atomic<bool>* cancel = nullptr,
                                                 bool wait = true, bool consumer_waits = false);

  // Single pass: shard `shard` opened for ranged reads of its samples
  // (OpenedShard::OpenRanged), for the rest of a pass that let it go
  // before its last use: its head as its receive in this process kept it
  // (KeepHead), each sample read by a ranged read of its bytes alone
  // (counted in bytes_downloaded). Null when that cannot be: not a single
  // pass, a shard that is not SamplePeekable, has a meta file or is a
  // Parquet piece, or whose head was not kept (never received here); the
  // caller then opens it whole (OpenShard). Its reads' errors name the
  // stream, the shard, the sample and its URL and bytes. Its FillAhead
  // reads its spans at once (RemoteSource::GetRangesOnlyOfVersion), each
  // answer's ETag checked as a sample's read checks it.
  Result<std::unique_ptr<OpenedShard>> OpenRangedShard(size_t shard);

  // The bytes shard `shard` takes held in memory by a single pass: its
  // data and meta files' as the index gives them (uncompressed).
  uint64_t HeldBytes(size_t shard) const {
    const ShardRef e = index_->ref(shard);
    return e.raw_data.bytes + (e.raw_meta ? e.raw_meta->bytes : 0);
  }

  // Whether sample reads of shard `shard` may be peeked from the remote
  // (PeekSample) rather than wait for the shard: the stream has a remote,
  // no validate_hash (peeked bytes cannot be checked before the whole
  // shard is there), the shard is SamplePeekable (uncompressed MDS) or a
  // Parquet row group's piece, and not present in the cache right now.
  bool Peekable(size_t shard);
  // Whether opening `shard` decodes its rows (its format's
  // ShardFormatDescriptor::open_decodes: Parquet); false past the end.
  bool OpenDecodes(size_t shard) const;
  // Sample `i` of shard `shard` read from the remote without the shard
  // (PeekSampleFromRemote; a piece's row: PeekPieceRow); for a Peekable
  // shard. Its errors (callers fall back to opening the shard). `cancel`:
  // as PeekSampleFromRemote's.
  Result<PeekedSample> PeekSample(size_t shard, uint32_t i, std::stop_token cancel = {});
  // The head of the stream's first shard read on a guess beside its index
  // (LoadStreamIndex's `guess`): the stream's first PeekSample, whatever
  // its shard, takes it (PeekSampleFromRemote uses it where it is that
  // shard's and agrees with it); later ones read as ever. Call before the
  // first PeekSample.
  void KeepGuessedHead(std::unique_ptr<GuessedHead> guessed) { guessed_ = std::move(guessed); }
  // The head of the stream's first Parquet file read on a guess beside its
  // footers (LoadStreamIndex's `piece_guess`): the first read of a piece
  // whose first spans it holds (GuessedSpansServing) receives the piece
  // into its buffer and reads only the rest; dropped (its read stopped) at
  // the end of the first peek, or with the stream, when none did.
  void KeepGuessedPieceHead(std::unique_ptr<GuessedPieceHead> guessed) {
    std::lock_guard<std::mutex> lock(guessed_mu_);
    guessed_piece_ = std::move(guessed);
  }
  // The peek of shard `shard` is over (its shard was checked, or failed):
  // a piece the peek read and no fetch took (another process cached the
  // row group meanwhile) is dropped, not held for the stream's life.
  void PeekDone(size_t shard);

  // Serving from bytes in flight: from now on, a download of an
  // uncompressed shard of a SamplePeekable format with no meta file, made
  // by this process while the stream has no validate_hash, publishes how
  // far it has arrived (a FillWatermark; a single pass's receive, which
  // parts have: ArrivedBytes), and ReadInFlight reads its samples from it.
  // Call before the first OpenShard.
  void ServeInFlight() { serve_in_flight_ = true; }
  // Whether shards are received into memory, nothing cached (see above).
  bool single_pass() const { return single_pass_; }
  // Single pass: a shard's buffer, once its last holder lets it go, is
  // kept for the next receive (ShardBufferPool), up to `buffers` of them:
  // as many as the reader receives at once (fetch_concurrency). 1 until
  // called.
  void KeepReceiveBuffers(size_t buffers) { receive_buffers_.Keep(buffers); }
  // Sample `i` of shard `shard` from its download in flight in this
  // process, once the sample's offsets entry and bytes have arrived (with
  // `wait`, waiting for them; `stop` ends the wait): nullopt when there is
  // no such download, it ended before them (the shard's open reports a
  // failure), or they have not arrived and `wait` is false. The bytes are
  // those the download wrote into the cache's temporary (a single pass's:
  // into its memory): nothing of the whole shard (its size, which the
  // store checks as it goes, is the only check there is without
  // validate_hash) has been checked yet. A single pass's receive that
  // failed before them is its error (PeekSampleFromArrived: the URL and the
  // bytes waited for), the one its open returns.
  // `blocked` (may be null): set when the call waited for bytes.
  Result<std::optional<PeekedSample>> ReadInFlight(size_t shard, uint32_t i, bool wait,
                                                   std::stop_token stop = {},
                                                   bool* blocked = nullptr);
  // Whether a download of shard `shard` by this process is published for
  // ReadInFlight (see ServeInFlight): never when the remote does not
  // report its fills as they come (RemoteSource::ReportsFills: a plain
  // path, a store without GetToFileFilling).
  bool MayServeInFlight(size_t shard) const;

  // Deletes shard `shard`'s cached files (data, meta, kept zips) now, as
  // Mosaic's evict_shard; a later read fetches them again. Errors: a stream
  // read in place (no remote: its files are the dataset, never deleted), a
  // shard some process is reading (pinned), ShardCache::Evict's.
  Status Evict(size_t shard);

  // The cache's counters; a local-only stream's files mapped in place count
  // as cache hits.
  CacheCounters cache_counters() const;
  // The stream's cache: null for a local-only stream that has not needed one.
  ShardCache* cache() {
    std::lock_guard<std::mutex> lock(cache_mu_);
    return cache_.get();
  }
  uint64_t bytes_downloaded() const { return bytes_downloaded_.load() + ranged_bytes_->load(); }
  // Objects (or Parquet pieces) this process fetched from the remote, the
  // attempts that failed (each retried or given up), and the time spent in
  // the fetches (successful ones, all their requests and store retries).
  uint64_t downloads() const { return downloads_.load(std::memory_order_relaxed); }
  uint64_t download_errors() const { return download_errors_.load(std::memory_order_relaxed); }
  uint64_t download_ns() const { return download_ns_.load(std::memory_order_relaxed); }

 private:
  StreamShards() = default;
  // `download`: adds the time spent downloading (the rest is decoding).
  // `fill` (may be null): told of the download of an uncompressed file.
  Status FetchFile(const FileInfo& raw, const std::optional<FileInfo>& zip, const ShardEntry& entry,
                   const std::string& tmp_path, std::chrono::nanoseconds* download,
                   FillWatermark* fill = nullptr);
  Result<uint64_t> Download(const std::string& basename, const std::string& path,
                            uint64_t expected_size, std::chrono::nanoseconds* download,
                            FillWatermark* fill = nullptr);
  // MayServeInFlight for `entry`, the file `raw` of it.
  bool Publishes(const ShardEntry& entry, const FileInfo& raw) const;
  // remote_->ReportsFills(), asked once (reports_fills_).
  bool RemoteReportsFills() const;
  // FetchFile for cache entry `item`, with its download published for
  // ReadInFlight while it runs when the entry is one (see ServeInFlight).
  Status FetchPublished(size_t item, const FileInfo& raw, const std::optional<FileInfo>& zip,
                        const ShardEntry& entry, const std::string& tmp_path,
                        std::chrono::nanoseconds* download);
  using PieceRead = std::promise<Result<std::shared_ptr<const ShardBytes>>>;
  // A Parquet row group's piece (ShardEntry::piece): its column chunks (in
  // ranged parts, all at once: PieceParts), then the file's footer tail
  // (ParquetFooterSource: the node's footer store, or the file), into the
  // cache's temporary in page-cache blocks. `tell` (may be null; the peek's, whose consumer waits on the
  // piece: PieceUse::kWaitedOn): given the bytes (or the read's error) as
  // soon as they are read, before they are written.
  Status FetchPiece(const ShardEntry& entry, const std::string& tmp_path,
                    std::chrono::nanoseconds* download, std::stop_token stop, PieceRead* tell);
  // The piece's bytes as FetchPiece stores them (chunk reads, then the
  // tail), in memory, read in the parts PieceParts cuts for `use`; `stop`
  // ends a read in flight (kCancelled).
  Result<ShardBytes> ReadPiece(const ShardEntry& entry, PieceUse use,
                               std::chrono::nanoseconds* download, std::stop_token stop);
  // The guessed head of the stream's first Parquet file, moved out, when
  // its spans begin the piece of `file` (of the `listed` version) read in
  // `spans`; else null (kept for another piece).
  std::unique_ptr<GuessedPieceHead> GuessedPieceOf(const std::string& file,
                                                   const ObjectVersion& listed,
                                                   const std::vector<DataSpan>& spans);
  // Row `i` of shard `shard`, the piece `entry`, for the first row's peek
  // (PeekSample): the peek fetches the piece into the cache itself (in
  // peek_fetch_, holding the cache's download claim) and decodes the row
  // from the bytes read, so the row group costs one GET per node; when
  // another process holds the claim the peek fails (the shard serves the
  // row, a hit). A cold first row waits for one row group's download and
  // decode, not for its write into the cache and the open behind it.
  Result<PeekedSample> PeekPieceRow(size_t shard, const ShardEntry& entry, uint32_t i,
                                    std::stop_token cancel);
  // The stream's ShardCache, opened on first use for a local-only stream.
  Result<ShardCache*> Cache();
  // Local-only: the folder's file of cache entry `item` mapped (its size,
  // and its raw hash once with validate_hash, checked), or nullopt when
  // it is missing (then decompressed from its zip through the cache).
  Result<std::optional<MappedFile>> MapInPlace(size_t item, const FileInfo& raw);
  // nullopt: `wait` false and the cache entry cannot be had without waiting.
  // `timing`: adds this file's waits and download (ShardOpenTiming).
  Result<std::optional<std::pair<ShardPin, MappedFile>>> PinAndMap(
      size_t item, const FileInfo& raw, const std::optional<FileInfo>& zip,
      const ShardEntry& entry, const std::atomic<bool>* cancel, bool wait,
      ShardOpenTiming* timing);
  // Single pass: keeps `data`'s head (its bytes before shard `shard`'s
  // first sample) for OpenRangedShard, where the shard could be read so,
  // with `etag`, the ETag its receive's answer stated ("" for none).
  void KeepHead(size_t shard, const ShardEntry& e, std::string_view data, std::string etag);
  // Single pass: shard `shard` received into memory and opened over it.
  Result<std::unique_ptr<OpenedShard>> OpenReceived(size_t shard, ShardEntry e,
                                                    ShardOpenTiming* timing);
  // A receive published for ReadInFlight: its cache entry, and the record
  // of its current attempt (null before the first).
  struct Publication {
    size_t item;
    std::shared_ptr<ArrivedBytes> current;
  };
  // Single pass: the bytes of file `raw` (or of its zip, decompressed), as
  // checked as FetchFile checks them; a corrupt download is received again
  // (corrupt_retry_), then CorruptAfter's error.
  // `publish` (may be null; an uncompressed data file that Publishes): each
  // attempt's parts are published for ReadInFlight under its cache entry
  // as they arrive (PublishArrivals, publish->current); the caller ends
  // the last (EndArrivals). `etag` (may be null): set to the ETag the
  // store's answer stated for the bytes returned ("" where it stated none).
  Result<ShardBytes> ReceiveChecked(const FileInfo& raw, const std::optional<FileInfo>& zip,
                                     const ShardEntry& entry, std::chrono::nanoseconds* download,
                                     Publication* publish = nullptr, std::string* etag = nullptr);
  // ReceiveChecked's one attempt.
  Result<ShardBytes> Receive(const FileInfo& raw, const std::optional<FileInfo>& zip,
                              const ShardEntry& entry, std::chrono::nanoseconds* download,
                              Publication* publish, std::string* etag);
  // `arrived` is now what ReadInFlight reads for cache entry `item`; the
  // one it replaces (an earlier attempt's, or another receive's of the
  // same shard) is abandoned: its readers look again and find this one.
  void PublishArrivals(size_t item, std::shared_ptr<ArrivedBytes> arrived);
  // Unpublishes `publication`'s current record (unless another has
  // replaced it) and Finishes it with `status`.
  void EndArrivals(const Publication& publication, const Status& status);
  // `st` (a corruption) with what was expected of the stored file of `raw`
  // after `fetches` downloads: the one wording of a shard that stays corrupt.
  Status CorruptAfter(const Status& st, const FileInfo& raw, const std::optional<FileInfo>& zip,
                      const ShardEntry& entry, int fetches) const;
  // Counts one remote fetch that took `took` (ok) or failed.
  void CountDownload(bool ok, std::chrono::steady_clock::duration took,
                     std::chrono::nanoseconds* download);

  StreamOptions stream_;
  std::string root_;
  Env* env_ = Env::Default();  // the cache's and every file written here
  const ShardTable* index_ = nullptr;
  std::shared_ptr<RemoteSource> remote_;
  CacheOptions cache_options_;
  // Its cache entries (data files, then meta files) over the index.
  std::shared_ptr<const ShardSpecList> cache_specs_;
  mutable std::mutex cache_mu_;
  std::unique_ptr<ShardCache> cache_;  // set at Open with a remote, else by Cache()
  // Which cache entries hold each shard's files (shared with cache_specs_).
  std::shared_ptr<const ShardItems> items_;
  std::mutex verified_mu_;
  std::vector<bool> verified_;  // per cache entry, this process
  // Whether a failed download goes again (Download), and a corrupt one
  // (PinAndMap): set at Open.
  std::optional<RetryPolicy> download_retry_;
  std::optional<RetryPolicy> corrupt_retry_;
  std::optional<RetryPolicy> piece_retry_;  // a row group's ranged reads
  std::atomic<uint64_t> bytes_downloaded_{0};
  std::atomic<uint64_t> downloads_{0}, download_errors_{0}, download_ns_{0};
  std::once_flag footers_made_;
  std::optional<ParquetFooterSource> footers_;  // ReadPiece's, made once
  std::atomic<uint64_t> in_place_hits_{0};
  // Single pass: the receives' buffers (KeepReceiveBuffers).
  ShardBufferPool receive_buffers_;
  bool serve_in_flight_ = false;  // ServeInFlight
  bool single_pass_ = false;      // ReadsInSinglePass(stream)
  mutable std::atomic<int> reports_fills_{-1};  // RemoteReportsFills: -1 not asked yet
  // The downloads in flight ReadInFlight may read, by cache entry.
  std::mutex fills_mu_;
  std::unordered_map<size_t, std::shared_ptr<FillWatermark>> fills_;
  // A single pass's receives in flight, by cache entry (under fills_mu_).
  std::unordered_map<size_t, std::shared_ptr<ArrivedBytes>> arrivals_;
  // Single pass: the heads KeepHead kept, by shard (a few bytes a
  // sample: the index's own order of size), for the dataset's life, each
  // with the ETag its receive saw, which the shard's ranged reads ask for.
  struct KeptHead {
    std::string bytes;
    std::string etag;
  };
  std::mutex heads_mu_;
  std::unordered_map<size_t, std::shared_ptr<const KeptHead>> heads_;
  // Bytes read by ranged shards' sample reads (shared with those shards,
  // which may outlive a pass).
  std::shared_ptr<std::atomic<uint64_t>> ranged_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  // The first row's peek's fetch of its piece (PeekPieceRow); last, so it
  // is joined before anything it uses goes.
  std::mutex peek_fetch_mu_;
  std::future<void> peek_fetch_;
  // KeepGuessedHead's, until the first PeekSample; after remote_, which
  // its read uses.
  std::mutex guessed_mu_;
  std::unique_ptr<GuessedHead> guessed_;
  std::unique_ptr<GuessedPieceHead> guessed_piece_;  // KeepGuessedPieceHead's
};

}  // namespace sluice

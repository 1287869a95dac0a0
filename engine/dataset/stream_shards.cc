#include "engine/dataset/stream_shards.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/exception_status.h"
#include "base/file.h"
#include "base/page_cache_write.h"
#include "engine/cache/cache_layout.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/shard_items.h"
#include "engine/dataset/stream_index.h"
#include "formats/codec/compression.h"
#include "formats/codec/hashes.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/shard_view.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/footer.h"
#include "stores/http/http_client.h"

namespace sluice {
namespace {

// The recorded hash of `algo` for `f`, or an error saying none is recorded.
Result<std::string> ExpectedHash(const FileInfo& f, const std::string& algo) {
  auto it = f.hashes.find(algo);
  if (it == f.hashes.end()) {
    return InvalidArgumentError("validate_hash '" + algo + "': index.json records no such hash for '" +
                                f.basename + "'");
  }
  return it->second;
}

// A ranged read of a row group, from the version of its file that was
// listed, may heal unless it answered bytes that are not that version's
// (kCorrupt: a 412, another ETag, fewer bytes): asking again reads the
// same replaced file.
bool PieceReadMayHeal(const Status& s) { return DownloadMayHeal(s) && !IsCorruption(s); }

// A stream's cache entries as the cache sees them, read from its index as
// they are asked for (a million shards keep one copy of their names: the
// index's). A compressed file is downloaded to the fetch's scratch file
// (reserved with the shard while it is fetched) and, with keep_zip, kept as
// the shard's companion (counted while present). Local-only streams read
// their own zips in place: nothing extra is written.
class IndexShardSpecs final : public ShardSpecList {
 public:
  IndexShardSpecs(std::shared_ptr<const ShardTable> index,
                  std::shared_ptr<const ShardItems> items, bool remote, bool keep_zip)
      : index_(std::move(index)), items_(std::move(items)), remote_(remote),
        keep_zip_(keep_zip) {}

  size_t size() const override { return items_->size(); }

  ShardSpecView at(size_t k) const override {
    const uint64_t source = items_->source(k);
    const ShardRef e = index_->ref(source >> 1);
    const bool meta = (source & 1) != 0;
    // A meta entry exists only where the format has a meta file.
    const FileRef raw = meta ? *MetaFileOf(e) : e.raw_data;
    const std::optional<FileRef>& zip = meta ? e.zip_meta : e.zip_data;
    ShardSpecView v{raw.basename, raw.bytes, 0, {}, 0};
    if (remote_ && e.compression() && zip) {
      v.fetch_extra = zip->bytes;
      if (keep_zip_) {
        v.companion = zip->basename;
        v.companion_bytes = zip->bytes;
      }
    }
    return v;
  }

 private:
  std::shared_ptr<const ShardTable> index_;
  std::shared_ptr<const ShardItems> items_;
  bool remote_;
  bool keep_zip_;
};

}  // namespace

Result<std::unique_ptr<StreamShards>> StreamShards::Open(const StreamOptions& stream,
                                                         std::shared_ptr<const ShardTable> index,
                                                         std::shared_ptr<RemoteSource> remote,
                                                         std::optional<uint64_t> cache_limit,
                                                         std::chrono::milliseconds wait_timeout,
                                                         Env* env) {
  std::unique_ptr<StreamShards> s(new StreamShards());
  s->stream_ = stream;
  s->env_ = env;
  s->root_ = StreamRoot(stream);
  s->index_ = index.get();
  s->remote_ = std::move(remote);
  // Neither loop waits between attempts: a store that needs backoff retries
  // itself (RetriesItself), and a corrupt download is fetched again at once.
  const int retries = std::max(0, stream.download_retry);
  s->download_retry_.emplace(RetryOptions{
      .retries = s->remote_ && s->remote_->RetriesItself() ? 0 : retries,
      .jitter = false,
      .retryable = DownloadMayHeal});
  s->piece_retry_.emplace(RetryOptions{
      .retries = s->remote_ && s->remote_->RetriesItself() ? 0 : retries,
      .jitter = false,
      .retryable = PieceReadMayHeal});
  s->corrupt_retry_.emplace(RetryOptions{.retries = retries, .jitter = false,
                                         .retryable = CorruptionMayHeal});
  SLUICE_ASSIGN_OR_RETURN(ShardItems items,
                          ShardItems::Of(*index, JoinPath(s->root_, "index.json")));
  s->items_ = std::make_shared<const ShardItems>(std::move(items));
  const size_t num_items = s->items_->size();
  s->cache_specs_ = std::make_shared<const IndexShardSpecs>(std::move(index), s->items_,
                                                            s->remote_ != nullptr, stream.keep_zip);
  s->verified_.assign(num_items, false);
  s->cache_options_.root = s->root_;
  s->cache_options_.evictable = s->remote_ != nullptr;
  s->cache_options_.cache_limit = s->remote_ ? cache_limit.value_or(0) : 0;
  s->cache_options_.wait_timeout = wait_timeout;
  s->cache_options_.env = env;
  // A Parquet stream reading some columns keeps pieces of that set only:
  // its own partition of the folder's cache state, so a dataset of another
  // set may use the folder at the same time.
  if (stream.parquet) s->cache_options_.partition = ColumnSetTag(stream.parquet->columns);
  // A local-only stream's folder gets cache state only if a shard must be
  // decompressed into it (Cache()): reading in place writes nothing.
  // A single pass caches nothing: no cache state either.
  // StreamingDataset's options have the flag so already; a direct caller's
  // may not.
  s->single_pass_ = ReadsInSinglePass(stream);
  if (s->remote_ && !s->single_pass_) {
    SLUICE_ASSIGN_OR_RETURN(s->cache_, ShardCache::Open(s->cache_options_, s->cache_specs_));
  }
  return s;
}

Result<ShardCache*> StreamShards::Cache() {
  if (single_pass_) {
    return InvalidArgumentError(root_ + ": a single-pass stream has no shard cache");
  }
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (!cache_) {
    SLUICE_ASSIGN_OR_RETURN(cache_, ShardCache::Open(cache_options_, cache_specs_));
  }
  return cache_.get();
}

bool StreamShards::Peekable(size_t shard) {
  if (!remote_ || stream_.validate_hash || shard >= index_->size()) return false;
  const ShardEntry& config = index_->config(shard);
  // A Parquet row group's piece: read whole, its row decoded (PeekPieceRow).
  const bool piece = index_->entry(shard).piece.has_value();
  if ((!piece && !SamplePeekable(config)) || items_->meta(shard) >= 0) return false;
  // A single pass has nothing cached; a piece's peek fetches into the cache.
  if (single_pass_) return !piece;
  auto cache = Cache();
  return cache.ok() && !(*cache)->IsPresent(items_->data(shard));
}

bool StreamShards::OpenDecodes(size_t shard) const {
  if (shard >= index_->size()) return false;
  const ShardFormatDescriptor* format = FindShardFormat(index_->config(shard).format);
  return format != nullptr && format->open_decodes;
}

Result<PeekedSample> StreamShards::PeekSample(size_t shard, uint32_t i, std::stop_token cancel) {
  if (shard >= index_->size() || !remote_) {
    return InvalidArgumentError(root_ + ": shard " + std::to_string(shard) + " cannot be peeked");
  }
  std::unique_ptr<GuessedHead> guessed;
  {
    std::lock_guard<std::mutex> lock(guessed_mu_);
    guessed = std::move(guessed_);
  }
  const ShardEntry e = index_->entry(shard);
  if (e.piece) return PeekPieceRow(shard, e, i, std::move(cancel));
  return PeekSampleFromRemote(*remote_, RemoteKey(stream_, e.raw_data.basename), e, i,
                              std::move(cancel), guessed.get());
}

void StreamShards::PeekDone(size_t shard) {
  if (shard >= index_->size()) return;
  // A guessed head no piece's read took by now is not the first row's.
  std::unique_ptr<GuessedPieceHead> unused;
  {
    std::lock_guard<std::mutex> lock(guessed_mu_);
    unused = std::move(guessed_piece_);
  }
  // The peek's fetch of a piece has ended by now (the shard it fetched was
  // opened): joined here rather than at the next peek.
  std::future<void> fetch;
  {
    std::lock_guard<std::mutex> lock(peek_fetch_mu_);
    fetch = std::move(peek_fetch_);
  }
}

Result<std::optional<PeekedSample>> StreamShards::ReadInFlight(size_t shard, uint32_t i, bool wait,
                                                               std::stop_token stop,
                                                               bool* blocked) {
  if (!serve_in_flight_ || shard >= index_->size()) return std::optional<PeekedSample>();
  if (single_pass_) {
    std::shared_ptr<ArrivedBytes> arrived;
    {
      std::lock_guard<std::mutex> lock(fills_mu_);
      auto it = arrivals_.find(items_->data(shard));
      if (it == arrivals_.end()) return std::optional<PeekedSample>();
      arrived = it->second;
    }
    return PeekSampleFromArrived(std::move(arrived), index_->entry(shard), i, wait, std::move(stop),
                                 blocked);
  }
  std::shared_ptr<FillWatermark> fill;
  {
    std::lock_guard<std::mutex> lock(fills_mu_);
    auto it = fills_.find(items_->data(shard));
    if (it == fills_.end()) return std::optional<PeekedSample>();
    fill = it->second;
  }
  return PeekSampleFromFill(*fill, index_->entry(shard), i, wait, std::move(stop), blocked);
}

bool StreamShards::Publishes(const ShardEntry& entry, const FileInfo& raw) const {
  // Only a file whose samples can be read from its data file alone, and
  // never before a hash check the stream asks for (strict there). A
  // single pass's receive into memory reports its parts through the same
  // stores (RemoteSource::FetchToMemory) as a cached download its fills.
  return serve_in_flight_ && remote_ && !stream_.validate_hash && !entry.piece &&
         SamplePeekable(entry) && raw.basename == entry.raw_data.basename &&
         MetaFileOf(entry) == nullptr && RemoteReportsFills();
}

bool StreamShards::RemoteReportsFills() const {
  int known = reports_fills_.load(std::memory_order_acquire);
  if (known < 0) {
    // The same kind of store in every process: asked once.
    known = remote_->ReportsFills() ? 1 : 0;
    reports_fills_.store(known, std::memory_order_release);
  }
  return known == 1;
}

bool StreamShards::MayServeInFlight(size_t shard) const {
  if (!serve_in_flight_ || shard >= index_->size()) return false;
  const ShardEntry e = index_->entry(shard);
  return Publishes(e, e.raw_data);
}

Status StreamShards::FetchPublished(size_t item, const FileInfo& raw,
                                    const std::optional<FileInfo>& zip, const ShardEntry& entry,
                                    const std::string& tmp_path,
                                    std::chrono::nanoseconds* download) {
  if (!Publishes(entry, raw)) return FetchFile(raw, zip, entry, tmp_path, download);
  auto fill = std::make_shared<FillWatermark>(
      raw.bytes, remote_->Describe() + "/" + RemoteKey(stream_, raw.basename), env_);
  {
    std::lock_guard<std::mutex> lock(fills_mu_);
    fills_[item] = fill;
  }
  Status st = FetchFile(raw, zip, entry, tmp_path, download, fill.get());
  {
    std::lock_guard<std::mutex> lock(fills_mu_);
    auto it = fills_.find(item);
    if (it != fills_.end() && it->second == fill) fills_.erase(it);
  }
  fill->Finish(st);
  return st;
}

Status StreamShards::Evict(size_t shard) {
  if (!remote_) {
    return InvalidArgumentError(root_ + ": cannot evict shard " + std::to_string(shard) +
                                ": the stream is read in place (no remote), its files are the "
                                "dataset");
  }
  if (single_pass_) return Status::Ok();  // nothing of it is cached
  SLUICE_ASSIGN_OR_RETURN(ShardCache * cache, Cache());
  SLUICE_RETURN_IF_ERROR(cache->Evict(items_->data(shard)));
  if (items_->meta(shard) >= 0) SLUICE_RETURN_IF_ERROR(cache->Evict(size_t(items_->meta(shard))));
  return Status::Ok();
}

CacheCounters StreamShards::cache_counters() const {
  CacheCounters c;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_) c = cache_->counters();
  }
  c.cache_hits += in_place_hits_.load();
  return c;
}

Result<std::optional<MappedFile>> StreamShards::MapInPlace(size_t item, const FileInfo& raw) {
  std::string path = JoinPath(root_, raw.basename);
  auto map = MappedFile::Open(path);
  if (!map.ok()) {
    if (map.status().code() == StatusCode::kNotFound) return std::optional<MappedFile>();
    return map.status();
  }
  if (map->size() != raw.bytes) {
    return CorruptError(path + ": has " + std::to_string(map->size()) +
                        " bytes, index.json says " + std::to_string(raw.bytes));
  }
  const std::optional<std::string>& algo = stream_.validate_hash;
  if (algo && raw.hashes.count(*algo)) {
    bool check;
    {
      std::lock_guard<std::mutex> lock(verified_mu_);
      check = !verified_[item];
    }
    if (check) {
      SLUICE_RETURN_IF_ERROR(VerifyHash(*algo, map->data(), raw.hashes.at(*algo), path));
      std::lock_guard<std::mutex> lock(verified_mu_);
      verified_[item] = true;
    }
  }
  in_place_hits_.fetch_add(1);
  return std::optional<MappedFile>(std::move(*map));
}

void StreamShards::CountDownload(bool ok, std::chrono::steady_clock::duration took,
                                 std::chrono::nanoseconds* download) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
  if (download != nullptr) *download += ns;
  if (!ok) {
    download_errors_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  downloads_.fetch_add(1, std::memory_order_relaxed);
  download_ns_.fetch_add(static_cast<uint64_t>(ns.count()), std::memory_order_relaxed);
}

Result<uint64_t> StreamShards::Download(const std::string& basename, const std::string& path,
                                        uint64_t expected_size,
                                        std::chrono::nanoseconds* download, FillWatermark* fill) {
  if (!remote_) {
    // Local-only: the "stored" file is the one in the folder.
    std::string src = JoinPath(root_, basename);
    if (!FileExists(src, env_)) {
      return NotFoundError(src + ": missing, and the stream has no remote");
    }
    return FileSize(src, env_);
  }
  std::string key = RemoteKey(stream_, basename);
  Status last = Status::Ok();
  for (int attempt = 1;; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    // Another attempt writes the file again from its start: what the fill
    // told readers of the first no longer holds.
    if (fill != nullptr && attempt > 1) fill->Abandon();
    auto n = fill != nullptr ? remote_->FetchFilling(key, path, expected_size, *fill)
                             : remote_->Fetch(key, path, expected_size);
    CountDownload(n.ok(), std::chrono::steady_clock::now() - start, download);
    if (n.ok()) {
      bytes_downloaded_ += *n;
      return *n;
    }
    last = n.status();
    (void)env_->Remove(path);
    if (!download_retry_->ShouldRetry(last, attempt)) break;
  }
  return last.WithContext("downloading " + remote_->Describe() + "/" + key);
}

Result<ShardBytes> StreamShards::ReadPiece(const ShardEntry& entry, PieceUse use,
                                            std::chrono::nanoseconds* download,
                                            std::stop_token stop) {
  const ShardEntry::FilePiece& p = *entry.piece;
  const std::string key = RemoteKey(stream_, p.file);
  const std::string group = p.file + ": row group " + std::to_string(entry.row_group.value_or(0));
  // The etag the file was listed with: every read asks for that version,
  // so no piece mixes bytes of two. And the size it was listed with, which
  // the footer was read from: a file of another size is noticed by every
  // store, even one that knows no version (web) or a file rewritten in
  // place with its tag kept.
  const ObjectVersion listed(p.etag, p.file_bytes);
  std::call_once(footers_made_, [&] {
    footers_.emplace(*remote_, JoinPath(root_, cache_layout::kStateDir), env_);
  });
  SLUICE_ASSIGN_OR_RETURN(std::string tail, footers_->Tail(p, key, group));
  // The reads of the index's columns' chunks, as the index sized them
  // (formats/parquet/chunk_reads.h), read in parts below.
  SLUICE_ASSIGN_OR_RETURN(uint32_t length, parquet::ParseFooterLength(tail, p.file_bytes, p.file));
  if (uint64_t{length} + 8 != tail.size()) {
    return CorruptError(group + ": a footer of " + std::to_string(length) + " bytes in a tail of " +
                        std::to_string(tail.size()));
  }
  SLUICE_ASSIGN_OR_RETURN(parquet::FileFooter footer,
                          parquet::DecodeFooter(std::string_view(tail).substr(0, length),
                                                p.file_bytes, p.file));
  const size_t row_group = entry.row_group.value_or(0);
  if (row_group >= footer.meta.row_groups.size()) {
    return CorruptError(group + ": the file's footer has " +
                        std::to_string(footer.meta.row_groups.size()) + " row groups");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<size_t> fields,
                          parquet::FieldsNamed(footer.schema, entry.column_names, p.file));
  const std::vector<parquet::ByteRange> reads = parquet::ChunkReads(footer, row_group, fields);
  if (parquet::BytesOfReads(reads) != p.length) {
    return CorruptError(group + ": the footer's reads of its columns hold " +
                        std::to_string(parquet::BytesOfReads(reads)) + " bytes, the index " +
                        std::to_string(p.length));
  }
  // Each read in parts, all at once (engine/dataset/piece_parts.h): as a
  // guessed head read beside the footers cut them, when one serves the
  // piece; else finer for a piece a consumer waits on.
  std::vector<size_t> first_span;  // per read: its first span
  std::vector<DataSpan> spans =
      PieceParts(reads, PiecePartSize(remote_->PartSize(), PieceUse::kAhead), &first_span);
  std::unique_ptr<GuessedPieceHead> guess = GuessedPieceOf(p.file, listed, spans);
  if (guess == nullptr && use == PieceUse::kWaitedOn) {
    spans = PieceParts(reads, PiecePartSize(remote_->PartSize(), use), &first_span);
  }
  // Sized by the index's piece, which the footer's reads just matched;
  // the parts are received into it in place, never copied from their own
  // answers into a whole (that copy, its pages faulted fresh, was most of
  // a cold first row's wait after its row group's last byte: perf,
  // BENCHMARKS.md "row35s"). The first spans may be a guessed head's,
  // read beside the footers: then the piece is received into its buffer,
  // and only the spans past it are asked for here.
  const auto start = std::chrono::steady_clock::now();
  char* room = guess ? guess->Take(p.length + tail.size(), stop) : nullptr;
  const size_t guessed = room ? GuessedSpansServing(guess->spans(), spans) : 0;
  ShardBytes piece;
  if (room == nullptr) {
    guess.reset();
    SLUICE_ASSIGN_OR_RETURN(piece, ShardBytes::Allocate(p.length + tail.size(), group));
    room = piece.Room();
  }
  uint64_t rest_at = 0;  // where the spans past the guessed ones land
  for (size_t i = 0; i < guessed; ++i) rest_at += spans[i].length;
  const std::vector<DataSpan> rest(spans.begin() + static_cast<std::ptrdiff_t>(guessed), spans.end());
  std::vector<Result<uint64_t>> got;
  if (!rest.empty()) got = remote_->GetRangesOnlyOfVersionInto(key, rest, listed, room + rest_at, stop);
  if (guess) {
    std::vector<uint64_t> needed;
    for (size_t i = 0; i < guessed; ++i) needed.push_back(spans[i].length);
    std::vector<Result<uint64_t>> head = guess->Wait(needed, stop);
    piece = guess->Release();
    got.insert(got.begin(), std::make_move_iterator(head.begin()),
               std::make_move_iterator(head.end()));
  }
  const auto took = std::chrono::steady_clock::now() - start;
  char* at = room;
  for (size_t k = 0; k < reads.size(); ++k) {
    const parquet::ByteRange& r = reads[k];
    const std::string where = group + ", bytes [" + std::to_string(r.offset) + ", " +
                              std::to_string(r.offset + r.size) + ") of " + remote_->Describe() +
                              "/" + key;
    bool ok = true;
    for (size_t i = first_span[k]; i < first_span[k + 1]; ++i) {
      const DataSpan& span = spans[i];
      // A failed part is asked again alone, as the policy allows.
      for (int attempt = 1; !got[i].ok() && !stop.stop_requested() &&
                            piece_retry_->ShouldRetry(got[i].status(), attempt);
           ++attempt) {
        got[i] = remote_->GetRangesOnlyOfVersionInto(key, {span}, listed, at, stop).at(0);
      }
      ok = ok && got[i].ok();
      at += span.length;
    }
    // One download per read, as before the parts (the call's wall time on
    // the first: the parts ran together).
    CountDownload(ok, k == 0 ? took : std::chrono::steady_clock::duration{}, download);
    for (size_t i = first_span[k]; i < first_span[k + 1]; ++i) {
      if (!got[i].ok()) return got[i].status().WithContext(where);
      bytes_downloaded_ += *got[i];
      if (*got[i] != spans[i].length) {
        return CorruptError(where + ": answered " + std::to_string(*got[i]) +
                            " bytes for its part [" + std::to_string(spans[i].offset) + ", " +
                            std::to_string(spans[i].offset + spans[i].length) +
                            ") (the file had " + std::to_string(p.file_bytes) +
                            " when it was listed: it changed since?)");
      }
    }
  }
  std::memcpy(at, tail.data(), tail.size());
  piece.Received(p.length + tail.size());
  return piece;
}

std::unique_ptr<GuessedPieceHead> StreamShards::GuessedPieceOf(const std::string& file,
                                                               const ObjectVersion& listed,
                                                               const std::vector<DataSpan>& spans) {
  std::lock_guard<std::mutex> lock(guessed_mu_);
  // Another piece (a prefetch's beside the first row's) leaves it be.
  if (!guessed_piece_ || guessed_piece_->file() != file ||
      guessed_piece_->version().etag != listed.etag ||
      guessed_piece_->version().size != listed.size ||
      GuessedSpansServing(guessed_piece_->spans(), spans) == 0) {
    return nullptr;
  }
  return std::move(guessed_piece_);
}

Status StreamShards::FetchPiece(const ShardEntry& entry, const std::string& tmp_path,
                                std::chrono::nanoseconds* download, std::stop_token stop,
                                PieceRead* tell) {
  // The peek's piece (told as soon as read) is the one its consumer waits on.
  Result<ShardBytes> read = ReadPiece(
      entry, tell != nullptr ? PieceUse::kWaitedOn : PieceUse::kAhead, download, std::move(stop));
  if (!read.ok()) {
    if (tell != nullptr) tell->set_value(read.status());
    return read.status();
  }
  auto piece = std::make_shared<const ShardBytes>(std::move(*read));
  // The peek's row is decoded from these bytes while they are written.
  if (tell != nullptr) tell->set_value(piece);
  SLUICE_ASSIGN_OR_RETURN(TempFile out, TempFile::Create(tmp_path, env_));
  // In the page-cache writes a download makes (kPageCacheWriteBlock): one
  // write of a whole row group cost its open threads ~90% of their CPU in
  // the kernel's copy (perf, a cold pass of 16.5 MB row groups), and their
  // downloads waited behind it.
  uint64_t offset = 0;
  SLUICE_RETURN_IF_ERROR(WriteInPageCacheBlocks(out, piece->view(), &offset));
  return out.Commit();
}

Result<PeekedSample> StreamShards::PeekPieceRow(size_t shard, const ShardEntry& entry, uint32_t i,
                                                std::stop_token cancel) {
  SLUICE_ASSIGN_OR_RETURN(ShardCache * cache, Cache());
  // The row is read from the piece only by the node's downloader of it: the
  // peek fetches the piece into the cache (holding the cache's download
  // claim, as a shard's open does) and decodes the row from the bytes as
  // soon as they are read, before they are written. When another process
  // holds the claim, its piece is waited for and the peek gives way to the
  // shard (a hit), so a row group costs one GET per node however many
  // processes start in it. The fetch goes on in its own thread; the
  // shard's open in this process waits for it as for any other fetcher.
  auto read = std::make_shared<PieceRead>();
  std::future<Result<std::shared_ptr<const ShardBytes>>> piece_future = read->get_future();
  const size_t item = items_->data(shard);
  std::future<void> fetch;
  try {
    fetch = std::async(std::launch::async, [this, cache, item, entry, read, cancel]() {
      bool told = false;
      try {
        std::atomic<bool> stopped{false};
        std::stop_callback on_stop(cancel, [&stopped] { stopped.store(true); });
        auto pin = cache->TryAcquire(
            item,
            [&](const std::string& tmp) {
              told = true;
              return FetchPiece(entry, tmp, nullptr, cancel, read.get());
            },
            &stopped);
        if (!told) {
          told = true;
          read->set_value(pin.ok() ? UnavailableError(entry.raw_data.basename +
                                                      ": fetched by another process, not peeked")
                                   : pin.status());
        }
      } catch (...) {
        if (!told) read->set_value(StatusFromException(std::current_exception(),
                                                       "fetching the peeked row group"));
      }
    });
  } catch (...) {
    return StatusFromException(std::current_exception(), "starting the row group's fetch");
  }
  {
    // Joined before the next peek's fetch starts, or when the stream goes.
    std::lock_guard<std::mutex> lock(peek_fetch_mu_);
    peek_fetch_ = std::move(fetch);
  }
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<const ShardBytes> piece, piece_future.get());
  // Decoded by the shard's format reader over the same bytes, but only as
  // far as the row (consumer_waits: one page a column, not the group; a
  // bad page fails this peek, and the shard's whole open then says why).
  SLUICE_ASSIGN_OR_RETURN(ShardView view,
                          ShardView::Open(entry, piece->view(), {}, /*consumer_waits=*/true));
  auto held = std::make_shared<std::pair<std::shared_ptr<const ShardBytes>, ShardView>>(
      piece, std::move(view));
  SampleFields row;
  SLUICE_RETURN_IF_ERROR(held->second.Read(i, entry.column_names, &row));
  PeekedSample peeked;
  peeked.bytes = std::make_unique<const std::string>(row.raw);
  peeked.raw = *peeked.bytes;
  peeked.fields = std::move(row.fields);
  if (const parquet::ParquetShardReader* p = held->second.parquet()) {
    peeked.data_pages_decoded = p->data_pages_decoded();
  }
  peeked.keep = std::move(held);
  return peeked;
}

Status StreamShards::FetchFile(const FileInfo& raw, const std::optional<FileInfo>& zip,
                               const ShardEntry& entry, const std::string& tmp_path,
                               std::chrono::nanoseconds* download, FillWatermark* fill) {
  if (entry.piece && remote_) return FetchPiece(entry, tmp_path, download, {}, nullptr);
  const std::optional<std::string>& algo = stream_.validate_hash;
  if (entry.compression && zip) {
    // Local-only streams decompress the folder's own zip; remote ones a
    // download into the fetch's scratch file, which the cache deletes after
    // the fetch, or keeps as the shard's companion with keep_zip (see Open):
    // nothing here needs cleaning up.
    std::string zip_path = remote_ ? ScratchPath(tmp_path) : JoinPath(root_, zip->basename);
    SLUICE_ASSIGN_OR_RETURN(uint64_t size, Download(zip->basename, zip_path, zip->bytes, download));
    if (size != zip->bytes) {
      return CorruptError(zip_path + ": has " + std::to_string(size) + " bytes, index.json says " +
                          std::to_string(zip->bytes));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string packed, ReadFile(zip_path, zip->bytes, env_));
    if (algo) {
      SLUICE_ASSIGN_OR_RETURN(std::string expected, ExpectedHash(*zip, *algo));
      SLUICE_RETURN_IF_ERROR(VerifyHash(*algo, packed, expected, zip->basename));
    }
    SLUICE_ASSIGN_OR_RETURN(Compression codec, ParseCompression(*entry.compression));
    // Decoded straight into the file, a chunk at a time: a shard that
    // expands to raw.bytes costs that much disk (which the cache budgets),
    // never that much memory. tmp_path is the cache's temporary: TempFile
    // writes it in place, not through another.
    SLUICE_ASSIGN_OR_RETURN(TempFile out, TempFile::Create(tmp_path, env_));
    SLUICE_ASSIGN_OR_RETURN(uint64_t unpacked, DecompressToFile(codec, packed, raw.bytes, out.fd(),
                                                                out.path(), zip->basename, out.env()));
    if (unpacked != raw.bytes) {
      return CorruptError(zip->basename + ": decompresses to " + std::to_string(unpacked) +
                          " bytes, index.json says " + std::to_string(raw.bytes));
    }
    return out.Commit();
  }
  if (!remote_) {
    return NotFoundError(JoinPath(root_, raw.basename) + ": missing, and the stream has no remote");
  }
  SLUICE_ASSIGN_OR_RETURN(uint64_t size,
                          Download(raw.basename, tmp_path, raw.bytes, download, fill));
  if (size != raw.bytes) {
    return CorruptError(raw.basename + ": downloaded " + std::to_string(size) +
                        " bytes, index.json says " + std::to_string(raw.bytes));
  }
  if (algo) {
    SLUICE_ASSIGN_OR_RETURN(std::string expected, ExpectedHash(raw, *algo));
    SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Open(tmp_path));
    SLUICE_RETURN_IF_ERROR(VerifyHash(*algo, map.data(), expected, raw.basename));
  }
  return Status::Ok();
}

Status StreamShards::CorruptAfter(const Status& st, const FileInfo& raw,
                                  const std::optional<FileInfo>& zip, const ShardEntry& entry,
                                  int fetches) const {
  const std::optional<std::string>& algo = stream_.validate_hash;
  const FileInfo& stored = entry.compression && zip ? *zip : raw;
  std::string where = remote_ ? remote_->Describe() + "/" + RemoteKey(stream_, stored.basename)
                              : JoinPath(root_, stored.basename);
  return st.WithContext("'" + raw.basename + "' from " + where + " is corrupt after " +
                        std::to_string(fetches) + " download(s) (expected " +
                        std::to_string(stored.bytes) + " bytes" +
                        (algo && stored.hashes.count(*algo) ? ", " + *algo + " " + stored.hashes.at(*algo)
                                                            : std::string()) +
                        ")");
}

void StreamShards::PublishArrivals(size_t item, std::shared_ptr<ArrivedBytes> arrived) {
  std::shared_ptr<ArrivedBytes> before;
  {
    std::lock_guard<std::mutex> lock(fills_mu_);
    std::shared_ptr<ArrivedBytes>& slot = arrivals_[item];
    before = std::exchange(slot, std::move(arrived));
  }
  // An earlier attempt's buffer: its readers look again, and find this one.
  if (before) before->Abandon();
}

void StreamShards::EndArrivals(const Publication& publication, const Status& status) {
  if (!publication.current) return;  // no attempt began
  {
    // Another receive of the shard (a second open of it in this process)
    // may have published its own since: that one stays.
    std::lock_guard<std::mutex> lock(fills_mu_);
    auto it = arrivals_.find(publication.item);
    if (it != arrivals_.end() && it->second == publication.current) arrivals_.erase(it);
  }
  publication.current->Finish(status);
}

Result<ShardBytes> StreamShards::Receive(const FileInfo& raw, const std::optional<FileInfo>& zip,
                                         const ShardEntry& entry,
                                         std::chrono::nanoseconds* download,
                                         Publication* publish, std::string* etag) {
  if (entry.piece) {
    return ReadPiece(entry, PieceUse::kAhead, download, {});
  }
  const bool packed = entry.compression && zip;
  const FileInfo& stored = packed ? *zip : raw;
  const std::string key = RemoteKey(stream_, stored.basename);
  ShardBytes bytes;
  for (int attempt = 1;; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    // Each attempt into a buffer of its own: readers of the last one's
    // parts still view them (ArrivedBytes keeps its buffer).
    std::shared_ptr<ArrivedBytes> arrived;
    if (publish != nullptr) {
      arrived = std::make_shared<ArrivedBytes>(stored.bytes, remote_->Describe() + "/" + key);
      PublishArrivals(publish->item, arrived);
      publish->current = arrived;
    }
    ObjectStated stated;
    Result<ShardBytes> got =
        remote_->FetchToMemory(key, stored.bytes, stream_.single_pass_part_size, arrived.get(),
                               &receive_buffers_, &stated);
    CountDownload(got.ok(), std::chrono::steady_clock::now() - start, download);
    if (got.ok()) {
      bytes_downloaded_ += got->size();
      bytes = std::move(*got);
      if (etag != nullptr) *etag = std::move(stated.etag);
      break;
    }
    if (!download_retry_->ShouldRetry(got.status(), attempt)) return got.status();
  }
  // Checked on the stored bytes, as Mosaic does, before a sample is read.
  if (const std::optional<std::string>& algo = stream_.validate_hash) {
    SLUICE_ASSIGN_OR_RETURN(std::string expected, ExpectedHash(stored, *algo));
    SLUICE_RETURN_IF_ERROR(VerifyHash(*algo, bytes.view(), expected, stored.basename));
  }
  if (!packed) return bytes;
  SLUICE_ASSIGN_OR_RETURN(Compression codec, ParseCompression(*entry.compression));
  auto wrong_size = [&](uint64_t produced) {
    return CorruptError(zip->basename + ": decompresses to " + std::to_string(produced) +
                        " bytes, index.json says " + std::to_string(raw.bytes));
  };
  if (!DecompressesStraightInto(codec)) {
    SLUICE_ASSIGN_OR_RETURN(std::string whole,
                            Decompress(codec, bytes.view(), raw.bytes, zip->basename));
    if (whole.size() != raw.bytes) return wrong_size(whole.size());
    return ShardBytes::Of(std::move(whole));
  }
  // Decoded straight into room from the pool, as the zip was received
  // (the other codecs would decode into a string and copy it):
  // index.json's size (at most kMaxShardFileBytes, checked as the index
  // was read) reserves address space; only the bytes the stream produces
  // are touched. The zip goes back to the pool once this returns.
  SLUICE_ASSIGN_OR_RETURN(ShardBytes unpacked,
                          ShardBytes::Allocate(raw.bytes, zip->basename, &receive_buffers_));
  SLUICE_ASSIGN_OR_RETURN(uint64_t produced, DecompressInto(codec, bytes.view(), unpacked.Room(),
                                                            raw.bytes, zip->basename));
  if (produced != raw.bytes) return wrong_size(produced);
  unpacked.Received(produced);
  return unpacked;
}

Result<ShardBytes> StreamShards::ReceiveChecked(const FileInfo& raw,
                                                const std::optional<FileInfo>& zip,
                                                const ShardEntry& entry,
                                                std::chrono::nanoseconds* download,
                                                Publication* publish, std::string* etag) {
  for (int fetches = 1;; ++fetches) {
    Result<ShardBytes> got = Receive(raw, zip, entry, download, publish, etag);
    if (got.ok() || !IsCorruption(got.status())) return got;
    // A piece asks for its listed version: read again, it is the same.
    if (entry.piece) return got.status();
    if (!corrupt_retry_->ShouldRetry(got.status(), fetches)) {
      return CorruptAfter(got.status(), raw, zip, entry, fetches);
    }
  }
}

Result<std::unique_ptr<OpenedShard>> StreamShards::OpenReceived(size_t shard, ShardEntry e,
                                                                ShardOpenTiming* timing) {
  // Errors say which stream and shard, as the cache's fetch says its own
  // ("shard cache '<root>': fetching shard ..."): a Parquet piece's read
  // error names only its file and row group.
  auto receiving = [&](const FileInfo& raw) {
    return "single pass '" + root_ + "': receiving shard " + std::to_string(shard) + " '" +
           raw.basename + "'";
  };
  // Its parts published as they arrive (ReadInFlight) where it may be
  // served in flight; ended here with the open's outcome, whatever it is,
  // so that a reader waiting for a part that never came gets this error.
  std::optional<Publication> publish;
  if (Publishes(e, e.raw_data)) publish.emplace(Publication{items_->data(shard), nullptr});
  Result<std::unique_ptr<OpenedShard>> opened = [&]() -> Result<std::unique_ptr<OpenedShard>> {
    std::string etag;
    Result<ShardBytes> data = ReceiveChecked(e.raw_data, e.zip_data, e, &timing->download,
                                             publish ? &*publish : nullptr, &etag);
    if (!data.ok()) return data.status().WithContext(receiving(e.raw_data));
    ShardBytes meta;
    if (items_->meta(shard) >= 0) {
      Result<ShardBytes> got = ReceiveChecked(*e.raw_meta, e.zip_meta, e, &timing->download);
      if (!got.ok()) return got.status().WithContext(receiving(*e.raw_meta));
      meta = std::move(*got);
    }
    KeepHead(shard, e, data->view(), std::move(etag));
    return OpenedShard::OpenInMemory(std::move(e), std::move(*data), std::move(meta));
  }();
  if (publish) EndArrivals(*publish, opened.status());
  return opened;
}

namespace {

// Whether a single pass's shard can be read by ranged reads of its samples
// (OpenedShard::OpenRanged): the bytes a sample's bounds and its own are
// in the data file alone.
const SamplePeekHooks* RangedHooks(const ShardEntry& e) {
  if (e.piece || e.raw_meta || !SamplePeekable(e) || e.samples == 0) return nullptr;
  const ShardFormatDescriptor* format = FindShardFormat(e.format);
  return format == nullptr ? nullptr : format->peek;
}

}  // namespace

void StreamShards::KeepHead(size_t shard, const ShardEntry& e, std::string_view data,
                            std::string etag) {
  const SamplePeekHooks* hooks = RangedHooks(e);
  if (hooks == nullptr) return;
  const DataSpan bounds = hooks->bounds_at(0);
  if (bounds.offset + bounds.length > data.size()) return;
  Result<DataSpan> first =
      hooks->sample_span(e, 0, data.substr(bounds.offset, bounds.length), e.raw_data.basename);
  if (!first.ok() || first->offset > data.size()) return;  // its open reports it
  auto head = std::make_shared<const KeptHead>(
      KeptHead{std::string(data.substr(0, first->offset)), std::move(etag)});
  std::lock_guard<std::mutex> lock(heads_mu_);
  heads_.try_emplace(shard, std::move(head));
}

Result<std::unique_ptr<OpenedShard>> StreamShards::OpenRangedShard(size_t shard) {
  if (!single_pass_ || !remote_ || shard >= index_->size()) return std::unique_ptr<OpenedShard>();
  ShardEntry e = index_->entry(shard);
  if (RangedHooks(e) == nullptr) return std::unique_ptr<OpenedShard>();
  std::shared_ptr<const KeptHead> head;
  {
    std::lock_guard<std::mutex> lock(heads_mu_);
    auto it = heads_.find(shard);
    if (it == heads_.end()) return std::unique_ptr<OpenedShard>();
    head = it->second;
  }
  const std::string key = RemoteKey(stream_, e.raw_data.basename);
  const std::string what = "single pass '" + root_ + "': reading shard " + std::to_string(shard) +
                           " '" + e.raw_data.basename + "' sample ";
  // Each read names the size the index gives the file and the ETag the
  // receive's answer stated, as the receive's own parts do: a file
  // rewritten since, to another size or the same, fails before a byte of
  // it is placed. Where the receive saw no ETag, the size is the check.
  const ObjectVersion received(head->etag, e.raw_data.bytes);
  // Holds the remote and the counter, not this: the shard may outlive a
  // pass (a next epoch's seed).
  OpenedShard::SpanReader read = [remote = remote_, key, what, received,
                                  counted = ranged_bytes_](
                                     uint32_t i, const DataSpan& span) -> Result<std::string> {
    const std::string url = remote->Describe() + "/" + key;
    auto context = [&] {
      return what + std::to_string(i) + " from " + url + " (bytes " +
             std::to_string(span.offset) + "-" + std::to_string(span.offset + span.length - 1) +
             ")";
    };
    ObjectStated now;
    ObjectVersion asked = received;
    asked.stated = &now;
    Result<std::string> got =
        remote->GetRangeOnlyOfVersion(key, span.offset, span.length, asked, {});
    if (!got.ok()) return got.status().WithContext(context());
    // A store that reads any version (the web stores send no If-Match)
    // answers the object as it is now: its ETag is compared here.
    SLUICE_RETURN_IF_ERROR(
        AnswerIsOfVersion(url, received.etag, now.etag, span.offset, span.length)
            .WithContext(context()));
    counted->fetch_add(got->size(), std::memory_order_relaxed);
    return got;
  };
  // FillAhead's: each answer's ETag checked as above; one that fails
  // leaves its samples to `read`, whose error names the sample.
  OpenedShard::SpansReader read_spans =
      [remote = remote_, key, received,
       counted = ranged_bytes_](const std::vector<DataSpan>& spans) {
        std::vector<ObjectStated> now(spans.size());
        std::vector<Result<std::string>> got =
            remote->GetRangesOnlyOfVersion(key, spans, received, {}, &now);
        for (size_t k = 0; k < got.size(); ++k) {
          if (!got[k].ok()) continue;
          Status same = AnswerIsOfVersion(remote->Describe() + "/" + key, received.etag,
                                          now[k].etag, spans[k].offset, spans[k].length);
          if (!same.ok()) {
            got[k] = std::move(same);
            continue;
          }
          counted->fetch_add(got[k]->size(), std::memory_order_relaxed);
        }
        return got;
      };
  return OpenedShard::OpenRanged(std::move(e), head->bytes, std::move(read),
                                 std::move(read_spans));
}

bool IsCorruption(const Status& s) {
  return s.code() == StatusCode::kCorrupt || s.code() == StatusCode::kHashMismatch;
}

bool DownloadMayHeal(const Status& s) {
  return s.code() != StatusCode::kNotFound && s.code() != StatusCode::kInvalidArgument &&
         !IsObjectChangedError(s);
}

bool CorruptionMayHeal(const Status& s) { return IsCorruption(s) && DownloadMayHeal(s); }

Result<std::optional<std::pair<ShardPin, MappedFile>>> StreamShards::PinAndMap(
    size_t item, const FileInfo& raw, const std::optional<FileInfo>& zip, const ShardEntry& entry,
    const std::atomic<bool>* cancel, bool wait, ShardOpenTiming* timing) {
  using Pinned = std::optional<std::pair<ShardPin, MappedFile>>;
  const std::optional<std::string>& algo = stream_.validate_hash;
  if (!remote_) {
    // In place: a present file is the shard (a decompressed one appears
    // whole, by rename); only a missing one goes through the cache.
    SLUICE_ASSIGN_OR_RETURN(std::optional<MappedFile> in_place, MapInPlace(item, raw));
    if (in_place) return Pinned(std::make_pair(ShardPin(), std::move(*in_place)));
  }
  SLUICE_ASSIGN_OR_RETURN(ShardCache * cache, Cache());
  // A corrupt download is downloaded again, up to 1 + download_retry times
  // (corrupt_retry_).
  int fetches = 0;
  auto still_corrupt = [&](const Status& st) {
    return CorruptAfter(st, raw, zip, entry, fetches);
  };
  int vanished = 0;
  for (int attempt = 0;; ++attempt) {
    bool fetched_here = false;
    auto fetch = [&](const std::string& tmp) {
      fetched_here = true;
      ++fetches;
      return FetchPublished(item, raw, zip, entry, tmp, &timing->download);
    };
    AcquireTimes times;
    auto acquired = [&]() -> Result<std::optional<ShardPin>> {
      if (!wait) return cache->TryAcquire(item, fetch, cancel, &times);
      SLUICE_ASSIGN_OR_RETURN(ShardPin pin, cache->Acquire(item, fetch, cancel, &times));
      return std::optional<ShardPin>(std::move(pin));
    }();
    timing->peer_fetch += times.peer_fetch;
    timing->room += times.room;
    if (!acquired.ok()) {
      // A row group's piece is not fetched again: its reads ask for the
      // listed version and FetchPiece's checks compare the footer with the
      // index, so a corrupt piece is a changed file (PieceReadMayHeal).
      const bool piece = entry.piece && remote_;
      if (fetched_here && !piece && IsCorruption(acquired.status())) {
        if (remote_ && corrupt_retry_->ShouldRetry(acquired.status(), fetches)) continue;
        return still_corrupt(acquired.status());
      }
      return acquired.status();
    }
    if (!acquired->has_value()) return Pinned();  // not now
    ShardPin pin = std::move(**acquired);
    Result<OwnedFd> fd = pin.Open();
    if (!fd.ok() && fd.status().code() == StatusCode::kNotFound && vanished < 2) {
      // Deleted (by a user or a cleaner) between the cache's look at the
      // file and this open: the next Acquire finds it missing and fetches
      // it again, as for a file deleted before.
      ++vanished;
      pin.Release();
      continue;
    }
    SLUICE_RETURN_IF_ERROR(fd.status());
    SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Map(fd->get(), pin.path()));
    if (map.size() != raw.bytes) {
      return CorruptError(pin.path() + ": has " + std::to_string(map.size()) +
                          " bytes, index.json says " + std::to_string(raw.bytes));
    }
    bool check = false;
    if (algo && !fetched_here && raw.hashes.count(*algo)) {
      std::lock_guard<std::mutex> lock(verified_mu_);
      check = !verified_[item];
    }
    if (check) {
      Status st = VerifyHash(*algo, map.data(), raw.hashes.at(*algo), pin.path());
      if (!st.ok()) {
        map = MappedFile();
        pin.Release();
        if (!remote_) return st;
        if (!corrupt_retry_->RetriesLeft(std::max(fetches, attempt))) return still_corrupt(st);
        // Delete the corrupt file (nobody else may be reading it: it is
        // evicted only when unpinned) and fetch it again.
        SLUICE_RETURN_IF_ERROR(cache->Evict(item).WithContext(st.message()));
        continue;
      }
    }
    {
      std::lock_guard<std::mutex> lock(verified_mu_);
      verified_[item] = true;
    }
    return Pinned(std::make_pair(std::move(pin), std::move(map)));
  }
}

Result<std::unique_ptr<OpenedShard>> StreamShards::OpenShard(size_t shard, size_t num_columns,
                                                             const std::atomic<bool>* cancel,
                                                             bool wait, bool consumer_waits) {
  if (shard >= index_->size()) {
    return OutOfRangeError(root_ + ": shard " + std::to_string(shard) + " does not exist");
  }
  ShardEntry e = index_->entry(shard);
  ShardOpenTiming timing;
  timing.start = std::chrono::steady_clock::now();
  if (single_pass_) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<OpenedShard> received,
                            OpenReceived(shard, std::move(e), &timing));
    timing.end = std::chrono::steady_clock::now();
    received->set_open_timing(timing);
    return received;
  }
  SLUICE_ASSIGN_OR_RETURN(auto data, PinAndMap(items_->data(shard), e.raw_data, e.zip_data, e,
                                               cancel, wait, &timing));
  if (!data) return std::unique_ptr<OpenedShard>();  // not now
  std::optional<std::pair<ShardPin, MappedFile>> meta;
  if (items_->meta(shard) >= 0) {
    SLUICE_ASSIGN_OR_RETURN(meta, PinAndMap(static_cast<size_t>(items_->meta(shard)), *e.raw_meta,
                                            e.zip_meta, e, cancel, wait, &timing));
    if (!meta) return std::unique_ptr<OpenedShard>();  // not now (the data file's pin goes)
  } else {
    meta.emplace();
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<OpenedShard> opened,
                          OpenedShard::Open(std::move(e), num_columns, std::move(data->first),
                                            std::move(data->second), std::move(meta->first),
                                            std::move(meta->second), consumer_waits));
  timing.end = std::chrono::steady_clock::now();
  opened->set_open_timing(timing);
  return opened;
}

}  // namespace sluice

// One shard made readable from the cache: its files pinned (so no process
// evicts them), memory-mapped, and a format reader over the mapping.
// Immutable after construction: Read may be called from several threads.
// Views it hands out live as long as the OpenedShard.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "base/status.h"
#include "engine/cache/shard_cache.h"
#include "engine/dataset/shard_bytes.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/shard_view.h"
#include "formats/index/index.h"

namespace sluice {

// Where opening a shard took its time (StreamShards::OpenShard), in the
// order its steps run: waiting for another process's download of it, for
// room under cache_limit, this process's download, then the rest (decode:
// decompression, hash checks, mapping, the format's header). A shard found
// in the cache has only the rest.
struct ShardOpenTiming {
  std::chrono::steady_clock::time_point start, end;
  std::chrono::nanoseconds peer_fetch{0}, room{0}, download{0};
};

class OpenedShard {
 public:
  // The shard keeps `entry` (its index entry); `data_pin`/`meta_pin` pin
  // the files at `data_path`/`meta_path` (meta unused for MDS). Errors
  // name the file. `consumer_waits`: the consumer waits for this open's
  // first read (ShardView::Open's: a Parquet group is then decoded as its
  // rows are read, a bad page failing the read that reaches it).
  static Result<std::unique_ptr<OpenedShard>> Open(ShardEntry entry, size_t num_columns,
                                                   ShardPin data_pin, MappedFile data,
                                                   ShardPin meta_pin, MappedFile meta,
                                                   bool consumer_waits = false);

  // A shard received into memory (the single-pass mode, StreamOptions::
  // single_pass): the reader views `data` and `meta` (empty for MDS), which
  // the shard owns and frees with itself; no file, no pin.
  static Result<std::unique_ptr<OpenedShard>> OpenInMemory(ShardEntry entry, ShardBytes data,
                                                           ShardBytes meta);

  // A single pass's shard let go before its last use (PrefetchSchedule::
  // Options::hold_room all taken), opened again for the rest of the
  // pass: `head` (its data file's bytes before its first sample: MDS's
  // count, offsets table and config, kept from its receive) is placed in
  // room of the file's size, and each sample's bytes are read into their
  // place by `read_span` (a ranged read of those bytes alone, found from
  // the head's bounds: the format's SamplePeekHooks) the first time Read
  // asks for them. No other byte of the file is read. For a data file of
  // a SamplePeekable format with no meta file. Read is thread-safe: a
  // sample is read once, under the shard's own mutex.
  using SpanReader = std::function<Result<std::string>(uint32_t i, const DataSpan& span)>;
  // Several spans at once (about one round trip), one answer per span in
  // order; FillAhead's. May be null (FillAhead then reads nothing).
  using SpansReader =
      std::function<std::vector<Result<std::string>>(const std::vector<DataSpan>& spans)>;
  static Result<std::unique_ptr<OpenedShard>> OpenRanged(ShardEntry entry, std::string_view head,
                                                         SpanReader read_span,
                                                         SpansReader read_spans = nullptr);
  bool ranged() const { return ranged_ != nullptr; }
  // A ranged shard's samples `samples` (in any order) read now by one call
  // of `read_spans`, samples whose bytes lie within kNearBytes of each
  // other in one span: the prefetch thread opening the shard reads the
  // samples its next uses read, so that the consumer does not wait a
  // round trip for each (issue 41). Best effort: a sample whose bounds or
  // read failed is left for Read, which reads it alone and reports its
  // error with that sample's context. Returns the spans read. Nothing for
  // a shard not ranged. Thread-safe, as Read.
  size_t FillAhead(const std::vector<uint32_t>& samples) const;
  // Samples apart by at most this many bytes are read by one span; such
  // a span reads the bytes between them too.
  static constexpr uint64_t kNearBytes = uint64_t{64} << 10;

  // The stand-in for a shard skipped as corrupt (skip_corrupt_shards): no
  // files, no entry; only skipped() may be called. One shared instance.
  static std::shared_ptr<const OpenedShard> Skipped();
  bool skipped() const { return entry_ == nullptr; }

  const ShardEntry& entry() const { return *entry_; }
  // The shard's format reader (not for Skipped()): lives as this does.
  const ShardView& view() const { return view_; }
  // How its open went (zeros for Skipped()); set once by its opener before
  // the shard is shared.
  const ShardOpenTiming& open_timing() const { return timing_; }
  void set_open_timing(const ShardOpenTiming& timing) { timing_ = timing; }
  // Fields of sample `i` of this shard, as DatasetReader::Read gives them
  // (`out->where` is left to the caller). `column_names` is the dataset's.
  Status Read(uint32_t i, const std::vector<std::string>& column_names, SampleFields* out) const;
  // Faults the shard's maps in now (see MappedFile::Populate): the
  // prefetcher does it so that the consumer does not. A data file on disk
  // (on_disk()) is read in whole, then no longer counts as on disk.
  void Populate() const;
  // True while the data file is read from disk a sample at a time: it was
  // not all in the page cache when the shard opened (a warm cache read
  // back after a restart, or evicted from memory) and Populate has not
  // read it in since. Its map then faults in only the pages a read
  // touches (MappedFile::AdviseRandom), and Read and Prefetch ask for the
  // sample's bytes ahead (WillNeed, MDS; at least kReadAheadBytes): with
  // the kernel's read-around,
  // each sample of a shuffled first batch read megabytes (read_ahead_kb
  // 8 MiB here), 0.2-0.4 GB for 16 samples of 256 KiB.
  bool on_disk() const { return on_disk_.load(std::memory_order_relaxed); }
  // Ends on_disk() without reading the file: faults read around them again
  // (MappedFile::AdviseReadAround). Past a pass's first batch, asking for
  // each sample costs more than it saves (a call per sample).
  void EndOnDisk() const;
  // Hints that sample `i` is read soon; nothing for a skipped shard.
  // PrefetchOffsets loads where the sample is (do it some samples ahead of
  // Prefetch, which reads that to load the sample's bytes).
  void PrefetchOffsets(uint32_t i) const {
    if (!skipped() && !ranged()) view_.PrefetchOffsets(i);
  }
  void Prefetch(uint32_t i) const {
    if (skipped() || ranged()) return;  // a ranged sample's bytes are not there yet
    if (on_disk()) ReadAhead(i);
    view_.Prefetch(i);
  }

 private:
  OpenedShard() = default;
  // Asks for sample i's bytes (MDS) from disk without waiting.
  void ReadAhead(uint32_t i) const;
  // OpenRanged's: sample i's bytes read into their place, once.
  Status FillRanged(uint32_t i) const;
  // Where sample i's bytes lie in the file (its bounds read from the
  // head); ranged_->mu held.
  Result<DataSpan> RangedSpan(uint32_t i) const;
  struct Ranged {
    SpanReader read_span;
    SpansReader read_spans;
    const SamplePeekHooks* hooks = nullptr;
    char* room = nullptr;  // held_data_'s bytes, written a sample at a time
    uint64_t head_bytes = 0;
    std::mutex mu;
    std::vector<bool> filled;  // under mu
  };
  std::unique_ptr<Ranged> ranged_;  // OpenRanged's
  static constexpr uint64_t kReadAheadBytes = uint64_t{256} << 10;

  // Null for Skipped(). Declared before view_, which may view it.
  std::unique_ptr<const ShardEntry> entry_;
  ShardPin data_pin_, meta_pin_;  // released after the maps (declared first)
  MappedFile data_, meta_;
  ShardBytes held_data_, held_meta_;  // OpenInMemory's bytes (before view_)
  ShardView view_;
  ShardOpenTiming timing_;
  mutable std::atomic<bool> on_disk_{false};  // see on_disk()
  // The last range ReadAhead asked for (a hint: readers race on it).
  mutable std::atomic<uint64_t> asked_begin_{0}, asked_end_{0};
};

}  // namespace sluice

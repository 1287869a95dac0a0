// One sample of an uncompressed shard read straight from the remote,
// before (and without) the shard, with ranged reads of its data file: the
// bytes that bound it (MDS: its offsets entry, offsets[i] and
// offsets[i + 1]), then its bytes. When the sample likely lies within
// kPeekOneReadBytes of its bounds (MDS: the first samples of a shard whose
// offsets table is small), one read takes both, through the sample's
// likely span and kPeekSlackBytes past it. When it likely lies further
// (MDS: a shuffled first sample deep in a large shard), its likely span
// and kPeekSlackBytes on either side are read beside the bounds, both
// requests at once: for samples of one size the guess holds the sample,
// and the peek costs one round trip, not two. Another read is made only
// when the bounds put the sample outside what was read. Which formats can,
// and how their bytes are laid out, is the format's
// (ShardFormatDescriptor::peek); the reads are this file's. A cold
// iteration's first sample then costs one or two round trips instead of a
// whole shard's download.
//
// The peek is a shortcut, never the truth: the shard, downloaded whole (and
// checked as usual), is what the iteration reads; a peeked sample is
// compared against it once it is there (see IterationCursor).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "base/arrived_bytes.h"
#include "base/fill_watermark.h"
#include "base/status.h"
#include "engine/dataset/remote_source.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/index/index.h"

namespace sluice {

class ForkSharedBytes;  // engine/dataset/fork_shared_bytes.h

// A sample larger than this is not peeked: its own transfer is most of a
// shard's, and it would sit in memory beside the shard.
inline constexpr uint64_t kMaxPeekedSampleBytes = uint64_t{16} << 20;

// The most one read takes to have the bounds and the sample in one round
// trip: through a link of ~100 MB/s and ~15 ms to the first byte (one S3
// connection), 1 MiB costs less time than the second round trip it saves.
inline constexpr uint64_t kPeekOneReadBytes = uint64_t{1} << 20;
// Read past the sample's likely end, for a sample larger than the guess
// (the shard's average) or further on (MDS: the config before the samples).
inline constexpr uint64_t kPeekSlackBytes = uint64_t{64} << 10;

// The first reads of a peek of sample `i` of `entry`, made at once, given
// the format's bounds_at and likely_span (never past the data file's
// size): from the bounds through the likely span and kPeekSlackBytes past
// it, when that is at most kPeekOneReadBytes; else the bounds, and beside
// them the likely span with kPeekSlackBytes on either side (from the
// bounds' end at the lowest) when that is at most kPeekOneReadBytes (a
// wrong guess then costs its bytes, not a round trip), else the bounds
// alone. The bounds' read is always the first.
std::vector<DataSpan> PeekFirstReads(const DataSpan& bounds, const DataSpan& likely,
                                     uint64_t file_bytes);

struct PeekedSample {
  // The sample's stored bytes (size header included), as the shard holds
  // them; behind a pointer so that `fields` stay valid when this moves.
  // Null for a sample read from a single pass's shard in flight
  // (PeekSampleFromArrived): its bytes stay in the shard's buffer, which
  // `keep` holds.
  std::unique_ptr<const std::string> bytes;
  // The sample's stored bytes wherever they are: *bytes, or the view into
  // the shard's buffer.
  std::string_view raw;
  // One view into *bytes (or into `keep`) per column, in stored order (as
  // the format's reader gives them).
  std::vector<std::string_view> fields;
  // What else the fields view, kept as long as they are: a Parquet row
  // group's piece and its reader's decoded buffers (`bytes` is then empty,
  // as a Parquet row's raw bytes are). Null for an MDS sample.
  std::shared_ptr<const void> keep;
  // A Parquet row's: the data pages its reader had decoded when the row
  // was read (one a column read: the peek decodes no more of the group).
  // 0 for an MDS sample.
  size_t data_pages_decoded = 0;
};

// Whether a sample of `entry` can be peeked: the shard is uncompressed and
// its format locates a sample from the data file alone (today MDS).
bool SamplePeekable(const ShardEntry& entry);

// The head of a cold stream's first shard, read on a guess beside the
// download of its index.json, so that an in-order first sample costs one
// round trip, not two (the index's, then the peek's). The guess is
// Mosaic's name for the first shard (GuessedFirstShard); the read is
// bytes [0, GuessedHeadBytes()): everything PeekFirstReads asks of sample
// 0 whenever it asks one read. Its bytes are told as they come off the
// socket (RemoteSource::GetRangeOnlyOfVersionInto into an ArrivedBytes), so
// that the peek serves the first sample once its offsets entry and its
// bytes are in, not once the whole head is (at 100 MB/s, 1 MiB is 10 ms).
// It is only a guess, read before the index says the shard's size:
// PeekSampleFromRemote uses the bytes for reads of the same key that lie
// within them, and only when the read's answer agrees with the index's
// entry (GuessAgrees: among others, the object's size as the answer stated
// it is the index's); anything else (a 404, a server ignoring Range,
// another name, a compressed shard, a size the entry does not have, an
// answer that stated none) drops them, and the peek reads as without them.
// A read that fails or ends short after some bytes came keeps those (they
// are the answer's, of the version it named); a reader of bytes that did
// not come reads them itself. The peek's reads beside them ask for the
// version the guess's answer named (its ETag), so that the sample is not
// made of two; a resumed answer of another ETag fails the read.
// Fork: a DataLoader's parent opens the dataset (and starts the read) and
// its forked workers read; the outcome is also published in memory shared
// with children forked after the read started (ForkSharedBytes: an
// anonymous MAP_SHARED mapping), once the read has ended, so the worker
// whose first sample is in the head takes the parent's bytes (waiting for
// the parent's read when it is still in flight) instead of reading them
// again: the parent's request is not one for nothing. A child stops
// waiting when `cancel` asks, when the parent's read ends without bytes
// (stopped with the parent's dataset, failed), or when the parent process
// is gone.
// Thread safety: Take may be called from any one thread at a time; the
// destructor must not run beside it. The Read it gives may be used on any
// thread, and outlive this (its bytes are shared; the destructor stops the
// read and waits for it, so they arrive no further, and readers waiting for
// more get the read's end: ArrivedBytes::Await's error or nothing). In a
// forked child the parent's thread is not there: the destructor leaves its
// handle and the parent's bytes alone.
class GuessedHead {
 public:
  // What the read got, once its answer came: the bytes from offset 0 as
  // they arrive (ArrivedBytes of GuessedHeadBytes(): when the read ends ok,
  // min(GuessedHeadBytes(), stated.size) of them have; otherwise its
  // error), and what the answer said of the whole object
  // (RemoteSource::GetRangeOnlyOfVersion's stated).
  struct Read {
    std::shared_ptr<ArrivedBytes> bytes;
    ObjectStated stated;
  };
  // The longest ETag a forked child is told (kMaxSharedEtag bytes); the
  // outcome of a read whose answer named a longer one is not shared.
  static constexpr size_t kMaxSharedEtag = 256;

  // Starts the read of `key` of `remote` on a thread of its own. `remote`
  // must outlive this.
  GuessedHead(RemoteSource& remote, std::string key);
  ~GuessedHead();  // stops the read (RemoteSource's stop), waits for it
  GuessedHead(const GuessedHead&) = delete;
  GuessedHead& operator=(const GuessedHead&) = delete;

  const std::string& key() const { return key_; }
  // The read, once per process: waits for its answer's head (not its
  // bytes, which arrive into Read::bytes) or its end (in a forked child,
  // for the parent's read to end: see above), or for a stop on `cancel`.
  // nullopt when the read failed before an answer, was stopped or taken
  // already.
  std::optional<Read> Take(std::stop_token cancel = {});

 private:
  class Progress;   // the read's IntoProgress (sample_peek.cc)
  std::optional<Read> TakeFromParent(std::stop_token cancel);
  void ReadHead();  // the thread's body

  RemoteSource& remote_;
  const std::string key_;
  const pid_t pid_;
  // The outcome as forked children see it; null when the mapping could
  // not be made.
  std::unique_ptr<ForkSharedBytes> shared_;
  std::stop_source stop_;
  // The bytes as they arrive; made before the thread starts, finished by it.
  std::shared_ptr<ArrivedBytes> arrived_;
  std::mutex mu_;
  std::condition_variable_any answered_cv_;
  bool answered_ = false;  // the answer's head came: stated_ is set
  bool done_ = false;      // the read ended
  bool taken_ = false;
  ObjectStated stated_;
  std::thread thread_;  // last: starts once the rest is in place
};

// The guess: Mosaic's first MDS shard, "shard.00000.mds" (ShardBasename).
std::string GuessedFirstShard();
// How many bytes from 0 the guess reads: sample 0's offsets entry and
// kPeekOneReadBytes past its start.
uint64_t GuessedHeadBytes();
// Whether a head whose read's answer stated `stated`, read from offset 0
// of the data file of `entry` with GuessedHeadBytes asked for, can be that
// file's head: the entry is SamplePeekable, and the answer stated the
// object's size and it is the entry's (a file rewritten to another size
// since, even longer than the guess, is not). That the bytes are all that
// was asked, or the whole file, is the read's own check (GuessedHead: a
// read that ends short is an error for the bytes that did not come).
bool GuessAgrees(const ShardEntry& entry, const ObjectStated& stated);

// Sample `i` (< entry.samples) of the SamplePeekable shard `entry`, whose
// data file is stored at `key` of `remote`. The bounds read are checked
// against the entry (MDS: past the offsets table, ordered, within
// raw_data.bytes) before anything is sized by them. Errors: the reads'
// (naming the object; kUnimplemented from a server that ignores Range:
// nothing of the shard is read; kCorrupt, ObjectSizeChangedError, from a
// store that tells the file is not raw_data.bytes long), kCorrupt for
// bounds or a sample that do not fit, kInvalidArgument for an entry that is not SamplePeekable or a
// sample over kMaxPeekedSampleBytes. The requests: PeekFirstReads', at
// once (RemoteSource::GetRangesOnlyOfVersion, of raw_data.bytes), then, unless one of them held the
// whole sample, the sample's span.
// `cancel`: once a stop is requested on it (from any thread), no further
// request is made, a request in flight ends (RemoteSource::GetRangeOnly's
// stop), and kCancelled is returned: a cancelled peek returns promptly
// however long its server takes to answer.
// `guessed` (may be null): the stream's GuessedHead, taken (its answer
// waited for) when its key is `key`; its bytes stand in for the first
// reads they hold when they agree with `entry` (GuessAgrees), and are
// dropped otherwise. Each range is used as soon as it has arrived (the
// bounds, then the sample), while the rest of the head still comes; a
// range the head's read ended without (failed, cut short) is read as
// without the guess. The bounds they give are checked as a read's are;
// the reads made beside them ask for the version the guess's answer named
// (its ETag, if any).
// Thread safety: as the remote's GetRangeOnly.
Result<PeekedSample> PeekSampleFromRemote(RemoteSource& remote, const std::string& key,
                                          const ShardEntry& entry, uint32_t i,
                                          std::stop_token cancel = {},
                                          GuessedHead* guessed = nullptr);

// Sample `i` (< entry.samples) of the SamplePeekable shard `entry` from
// `fill`, the download of its data file in flight: its bounds once they
// have arrived, checked as PeekSampleFromRemote checks them, then its
// bytes once they have. nullopt when they do not come from the fill (see
// FillWatermark::Read: `wait` false and not there yet, the download ended
// or was abandoned before them, `stop`) or the sample is over
// kMaxPeekedSampleBytes (its shard serves it). Errors: kCorrupt for bounds
// that do not fit, a failed read of the file. `blocked` (may be null): set
// when a read waited for the fill (FillWatermark::Read's).
Result<std::optional<PeekedSample>> PeekSampleFromFill(FillWatermark& fill, const ShardEntry& entry,
                                                       uint32_t i, bool wait,
                                                       std::stop_token stop = {},
                                                       bool* blocked = nullptr);

// PeekSampleFromFill from `arrived`, a single pass's data file being
// received into memory (ArrivedBytes::Await's waits): nullopt when the
// bytes do not come from there (not yet and no `wait`, the buffer
// abandoned, `stop`) or the sample is over kMaxPeekedSampleBytes. Errors
// as PeekSampleFromFill's, and the receive's error (naming the URL and the
// bytes waited for) when it failed before they arrived. The sample is not
// copied: `raw` and `fields` view the shard's buffer, which `keep` holds
// (through `arrived`).
Result<std::optional<PeekedSample>> PeekSampleFromArrived(std::shared_ptr<ArrivedBytes> arrived,
                                                          const ShardEntry& entry, uint32_t i,
                                                          bool wait, std::stop_token stop = {},
                                                          bool* blocked = nullptr);

}  // namespace sluice

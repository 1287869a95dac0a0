// The head of a cold Parquet folder's first listed file, read on a guess
// beside the footers, so that an unshuffled pass's first row group arrives
// one round trip sooner (issue 35): its request no longer waits for the
// footers' answers and the table's build.
//
// The guess: writers put a file's first row group right after its 4-byte
// magic, so the piece of its first row group (StreamShards::ReadPiece: its
// column chunks, read in parts of the remote's PartSize() where a guess
// serves it: PieceParts, PieceUse::kAhead) most likely
// begins with the parts [4, 4 + PartSize()), [4 + PartSize(), ...). Up to
// kParts of them are read (cut at the file's listed size) as that read
// does (GetRangesOnlyOfVersionInto, of the version the listing named: its
// size and etag), received in place into one buffer with room for any
// piece of the file, so that a piece whose first spans they are
// (GuessedSpansServing: the footer decides, nothing is trusted before it)
// is received into that buffer, its other parts beside them, and none is
// copied or asked for again.
//
// Wrong (the footer puts the first group elsewhere, the first row is in
// another row group, a forked child iterates), its bytes are wasted: at
// most kParts * PartSize() (16 MiB with the stores' 8 MiB parts) once per
// node, as only the node's first opener of a cold stream, which reads the
// footers, guesses (LoadStreamIndex). Right, the bytes past the group's
// end in its last guessed part (up to one part) are wasted.
//
// Fork: a DataLoader's parent opens the dataset (and starts the reads) and
// its forked workers read. Once the reads have all ended well, the process
// has forked (ForkSharedBytes::OnFork: at the fork, or as the last read
// ends after one), and no piece of the process took the buffer, the bytes
// are published (ForkSharedBytes: an anonymous MAP_SHARED mapping made
// before any fork; one 16 MiB copy) and the buffer is freed. No thread
// waits for a child: a DataLoader parent that never reads holds no thread
// once its reads end, and no private copy once it has forked its workers,
// only the published bytes, until one process takes them (Take: a forked
// child's first piece, or the parent's) and gives their memory back, or
// this goes. The taker copies them into a buffer of its own (16 MiB,
// against a second GET of them). A process that never forks takes its
// own buffer, copied nowhere. A child stops waiting when the parent
// publishes nothing (its own piece took the bytes, a read failed), another
// process took them, or the parent process is gone: then it reads the
// piece itself.
//
// Thread safety: one caller at a time; each span is read on a thread of
// its own (as a piece's parts go, each on a connection of its own), which
// the destructor stops and joins; a thread ends with its read. In a forked
// child the threads are the parent's: the destructor leaves their handles
// alone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

#include "base/status.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/shard_bytes.h"
#include "formats/dataset/format_descriptor.h"

namespace sluice {

class ForkSharedBytes;  // engine/dataset/fork_shared_bytes.h

class GuessedPieceHead {
 public:
  // Where writers put a file's first row group: past its magic "PAR1".
  static constexpr uint64_t kFirstGroupOffset = 4;
  static constexpr size_t kParts = 2;
  // The buffer's room: the file's listed size, at most this (virtual
  // memory: only the pages written are touched).
  static constexpr uint64_t kMaxRoomBytes = uint64_t{256} << 20;

  // Starts reading the head of `file` (its path in the stream; `key` of
  // `remote`) of the listed `version` (its etag, "" any, and size) on a
  // thread of its own. `remote` must outlive this.
  GuessedPieceHead(RemoteSource& remote, std::string key, std::string file,
                   ObjectVersion version);
  ~GuessedPieceHead();
  GuessedPieceHead(const GuessedPieceHead&) = delete;
  GuessedPieceHead& operator=(const GuessedPieceHead&) = delete;

  const std::string& file() const { return file_; }
  const ObjectVersion& version() const { return version_; }
  // The spans read, in file order, contiguous from kFirstGroupOffset; span
  // i's bytes land after those of the spans before it.
  const std::vector<DataSpan>& spans() const { return spans_; }

  // The buffer the spans are received into, once per process, for a
  // piece of `needed` bytes: the caller may write past the guessed spans'
  // bytes while the read goes on, and reads none of them before Wait.
  // Null when the buffer's room is under `needed` or could not be had
  // (nothing was read then), or once taken. Once the bytes are published
  // (the reads ended before the take), and in a forked child: a buffer of
  // its own holding the published bytes, once they are (waited for; a stop
  // on `stop` ends the wait), unless another process took them, else null.
  char* Take(uint64_t needed, std::stop_token stop = {});
  // For the taker: span i's answer once its first needed[i] bytes have
  // come (its read is then stopped: the rest of the guessed span is not
  // waited for, nor taken off the wire), or its read has ended without
  // them (how many came, or its error naming the object, as
  // GetRangeOnlyOfVersionInto gives them); the spans past needed.size()
  // are stopped at once. Every span's read has ended when it returns, so
  // nothing writes into the buffer any more. A stop on `stop` stops the
  // reads still waited for (they answer kCancelled).
  std::vector<Result<uint64_t>> Wait(const std::vector<uint64_t>& needed,
                                     std::stop_token stop = {});
  // For the taker, after Wait: the buffer, whose first bytes it says came
  // are the piece (ShardBytes::Received).
  ShardBytes Release() { return std::move(bytes_); }

 private:
  // One guessed span's read, on a thread of its own.
  struct SpanRead {
    std::stop_source stop;
    uint64_t received = 0;  // bytes [0, received) of the span are in
    uint64_t want = UINT64_MAX;  // Wait's: the read stops once they are in
    bool done = false;
    Result<uint64_t> got = uint64_t{0};
    std::thread thread;
  };
  class Progress;  // a span's IntoProgress (guessed_piece_head.cc)
  void ReadSpan(size_t i, char* into);  // a span's thread's body
  // Under mu_, once every read has ended and the process has forked: the
  // bytes published (and the buffer freed) unless a piece took them or a
  // read failed.
  void PublishOnceRead();
  bool AllRead() const;  // under mu_
  char* TakePublished(uint64_t needed, std::stop_token stop);

  RemoteSource& remote_;
  const std::string key_, file_;
  const ObjectVersion version_;
  const pid_t pid_;
  std::vector<DataSpan> spans_;
  ShardBytes bytes_;  // room for any piece of the file; none when allocation failed
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool taken_ = false;
  bool published_ = false;  // bytes_ freed: the bytes are in shared_ only
  // The bytes as forked children see them; null when the mapping could
  // not be made.
  std::unique_ptr<ForkSharedBytes> shared_;
  std::vector<uint64_t> claimed_;  // TakePublished's: each span's bytes published
  std::vector<std::unique_ptr<SpanRead>> reads_;  // last: their threads use the rest
};

// How many of `piece`'s first spans (a row group's piece in its read
// parts, in order) the guessed `head` spans serve: all of the piece's spans
// that have a guessed span at their place, each equal to it (the piece's
// last may end within it); 0 when any of those differs (the group is not
// where the guess read).
size_t GuessedSpansServing(const std::vector<DataSpan>& head, const std::vector<DataSpan>& piece);

}  // namespace sluice

#include "engine/dataset/guessed_piece_head.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "base/exception_status.h"
#include "engine/dataset/fork_shared_bytes.h"
#include "engine/dataset/piece_parts.h"

namespace sluice {

// Each span's bytes are a piece of what forked children get.
static_assert(GuessedPieceHead::kParts <= ForkSharedBytes::kMaxPieces);

// A span's bytes as they land: what Wait waits for.
class GuessedPieceHead::Progress final : public IntoProgress {
 public:
  Progress(GuessedPieceHead& head, SpanRead& read) : head_(head), read_(read) {}
  // The store checks the answer against the listed version itself.
  Status Answered(const ObjectStated&) override { return Status::Ok(); }
  void Received(uint64_t n) override {
    bool enough;
    {
      std::lock_guard<std::mutex> lock(head_.mu_);
      read_.received = n;
      enough = n >= read_.want;
      head_.cv_.notify_all();
    }
    // The piece's bytes are in: the rest of the guessed span is not taken
    // off the wire (the stop is posted to the loop).
    if (enough) read_.stop.request_stop();
  }

 private:
  GuessedPieceHead& head_;
  SpanRead& read_;
};

GuessedPieceHead::GuessedPieceHead(RemoteSource& remote, std::string key, std::string file,
                                   ObjectVersion version)
    : remote_(remote),
      key_(std::move(key)),
      file_(std::move(file)),
      version_(std::move(version)),
      pid_(getpid()) {
  // The parts of the first group's piece as ReadPiece cuts them where a
  // guess serves it (PieceUse::kAhead), over the file's bytes past the
  // magic: at most kParts.
  if (version_.size <= kFirstGroupOffset) return;
  const uint64_t part = PiecePartSize(remote_.PartSize(), PieceUse::kAhead);
  spans_ = PieceParts(
      {parquet::ByteRange{kFirstGroupOffset,
                          std::min(version_.size - kFirstGroupOffset, kParts * part)}},
      part);
  // Room for any piece of the file (its reads and its tail are bytes of
  // it), bounded: the listed size alone never sizes it.
  auto bytes = ShardBytes::Allocate(std::min(version_.size, kMaxRoomBytes),
                                    file_ + " (the guessed head)");
  if (!bytes.ok()) {
    spans_.clear();
    return;
  }
  bytes_ = std::move(*bytes);
  // Without the mapping a forked child reads for itself.
  uint64_t guessed = 0;
  for (const DataSpan& span : spans_) guessed += span.length;
  shared_ = ForkSharedBytes::Map(guessed);
  // Published for children only once one may come: a process that never
  // forks takes its own bytes without copying them twice.
  if (shared_ != nullptr) {
    try {
      shared_->OnFork([this] {
        std::lock_guard<std::mutex> lock(mu_);
        if (AllRead()) PublishOnceRead();
      });
    } catch (...) {
      shared_->PublishNothing();
    }
  }
  // All in place before any thread starts: each reads its own.
  for (size_t i = 0; i < spans_.size(); ++i) reads_.push_back(std::make_unique<SpanRead>());
  char* into = bytes_.Room();
  for (size_t i = 0; i < spans_.size(); ++i) {
    try {
      reads_[i]->thread = std::thread([this, i, into] { ReadSpan(i, into); });
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      reads_[i]->got = StatusFromException(std::current_exception(), "starting a guessed read");
      reads_[i]->done = true;
      if (AllRead() && shared_ != nullptr && shared_->Forked()) PublishOnceRead();
    }
    into += spans_[i].length;
  }
}

void GuessedPieceHead::PublishOnceRead() {
  // Taken by a piece of this process: they are its (it may be writing past
  // them); nothing was published (Take).
  if (taken_ || published_ || shared_ == nullptr) return;
  // A failed read: the buffer stays for this process's piece, which reads
  // the failed part again into it; a child reads the piece itself.
  for (const auto& read : reads_) {
    if (!read->got.ok()) {
      shared_->PublishNothing();
      return;
    }
  }
  try {
    std::vector<std::string_view> pieces;
    const char* from = bytes_.Room();
    for (size_t i = 0; i < reads_.size(); ++i) {
      pieces.emplace_back(from, std::min(reads_[i]->received, spans_[i].length));
      from += spans_[i].length;
    }
    // Copied: this process's own buffer is not needed any more (its piece
    // takes the published bytes too).
    if (shared_->Publish(pieces)) {
      published_ = true;
      // Its pages given back to the kernel: freed, the buffer would keep
      // them mapped among the process's recycled buffers.
      const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
      const uintptr_t begin =
          (reinterpret_cast<uintptr_t>(bytes_.Room()) + page - 1) / page * page;
      const uintptr_t end = reinterpret_cast<uintptr_t>(from) / page * page;
      if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
      bytes_ = ShardBytes();
    }
  } catch (...) {
    // Only the guess is lost: the buffer stays this process's.
    shared_->PublishNothing();
  }
}

void GuessedPieceHead::ReadSpan(size_t i, char* into) {
  SpanRead& read = *reads_[i];
  const DataSpan& span = spans_[i];
  Result<uint64_t> got = uint64_t{0};
  try {
    Progress progress(*this, read);
    got = remote_.GetRangeOnlyOfVersionInto(key_, span.offset, span.length, version_, into,
                                            progress, read.stop.get_token());
  } catch (...) {
    got = StatusFromException(std::current_exception(), "reading the guessed head of " + file_);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (got.ok()) read.received = std::max(read.received, *got);
  read.got = std::move(got);
  read.done = true;
  cv_.notify_all();
  // A child may be waiting already; else the next fork publishes.
  if (AllRead() && shared_ != nullptr && shared_->Forked()) PublishOnceRead();
}

GuessedPieceHead::~GuessedPieceHead() {
  if (getpid() != pid_) {
    // A forked child: the threads are the parent's; their handles are left
    // as they are, and so is the buffer they write into.
    for (auto& read : reads_) new std::thread(std::move(read->thread));
    if (claimed_.empty()) new ShardBytes(std::move(bytes_));
  } else {
    for (auto& read : reads_) read->stop.request_stop();
    for (auto& read : reads_) {
      if (read->thread.joinable()) read->thread.join();
    }
    // Children still waiting learn there is nothing to come; no fork
    // runs the hook on what goes now.
    if (shared_ != nullptr) {
      shared_->PublishNothing();
      shared_->OnFork(nullptr);
    }
  }
}

bool GuessedPieceHead::AllRead() const {
  return std::all_of(reads_.begin(), reads_.end(), [](const auto& r) { return r->done; });
}

char* GuessedPieceHead::Take(uint64_t needed, std::stop_token stop) {
  if (getpid() != pid_) return TakePublished(needed, std::move(stop));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (taken_ || spans_.empty()) return nullptr;
    if (!published_) {
      if (bytes_.room() < needed) return nullptr;
      taken_ = true;
      // The bytes are this piece's: children need not wait for the reads.
      if (shared_ != nullptr) shared_->PublishNothing();
      return bytes_.Room();
    }
  }
  // Published: the reads have ended, and no thread but the caller's uses
  // the rest.
  return TakePublished(needed, std::move(stop));
}

char* GuessedPieceHead::TakePublished(uint64_t needed, std::stop_token stop) {
  // mu_ is not used here: a fork may have copied it locked by the
  // parent's threads, which a child does not have.
  const uint64_t room = std::min(version_.size, kMaxRoomBytes);
  if (shared_ == nullptr || taken_ || spans_.empty() || room < needed) return nullptr;
  taken_ = true;
  // In a child, the buffer copied at the fork is the parent's, maybe
  // being written: left alone.
  if (getpid() != pid_) new ShardBytes(std::move(bytes_));
  shared_->Claim(
      [&](const ForkSharedBytes::Pieces& pieces) {
        if (pieces.size() != spans_.size()) return;
        auto bytes = ShardBytes::Allocate(room, file_ + " (the published guessed head)");
        if (!bytes.ok()) return;
        bytes_ = std::move(*bytes);
        char* to = bytes_.Room();
        for (size_t i = 0; i < spans_.size(); ++i) {
          std::memcpy(to, pieces[i].data(), pieces[i].size());
          claimed_.push_back(pieces[i].size());
          to += spans_[i].length;
        }
      },
      std::move(stop));
  return claimed_.empty() ? nullptr : bytes_.Room();
}

std::vector<Result<uint64_t>> GuessedPieceHead::Wait(const std::vector<uint64_t>& needed,
                                                     std::stop_token stop) {
  if (!claimed_.empty()) {
    // The published bytes, all in (TakePublished): a span of fewer than
    // needed ended short (the file is shorter than listed).
    std::vector<Result<uint64_t>> out;
    for (size_t i = 0; i < needed.size() && i < claimed_.size(); ++i) {
      out.emplace_back(std::min(claimed_[i], needed[i]));
    }
    return out;
  }
  std::vector<SpanRead*> enough;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < reads_.size(); ++i) {
      SpanRead& read = *reads_[i];
      read.want = i < needed.size() ? needed[i] : 0;
      if (read.received >= read.want) enough.push_back(&read);
    }
  }
  for (SpanRead* read : enough) read->stop.request_stop();
  // A stop stops the reads still waited for.
  std::stop_callback on_stop(stop, [this] {
    for (auto& read : reads_) read->stop.request_stop();
  });
  std::vector<Result<uint64_t>> out;
  std::unique_lock<std::mutex> lock(mu_);
  for (size_t i = 0; i < reads_.size(); ++i) {
    SpanRead& read = *reads_[i];
    cv_.wait(lock, [&] { return read.done; });
    if (i >= needed.size()) continue;
    // Ended short without an error: the file is shorter than listed.
    if (read.received >= needed[i] || read.got.ok()) {
      out.emplace_back(std::min(read.received, needed[i]));
    } else {
      out.emplace_back(read.got.status());
    }
  }
  return out;
}

size_t GuessedSpansServing(const std::vector<DataSpan>& head, const std::vector<DataSpan>& piece) {
  const size_t n = std::min(head.size(), piece.size());
  for (size_t i = 0; i < n; ++i) {
    const bool last = i + 1 == piece.size();
    if (piece[i].offset != head[i].offset ||
        (piece[i].length != head[i].length && !(last && piece[i].length < head[i].length))) {
      return 0;
    }
  }
  return n;
}

}  // namespace sluice

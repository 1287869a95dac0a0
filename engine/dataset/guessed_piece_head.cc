#include "engine/dataset/guessed_piece_head.h"

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
    }
    into += spans_[i].length;
  }
  if (shared_ != nullptr) {
    try {
      publisher_ = std::thread([this] { Publish(); });
    } catch (...) {
      shared_->PublishNothing();
    }
  }
}

void GuessedPieceHead::Publish() {
  // Until a child wants the bytes, or this goes (the destructor then
  // tells the children).
  if (!shared_->AwaitWanted()) return;
  bool published = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
      return std::all_of(reads_.begin(), reads_.end(), [](const auto& r) { return r->done; });
    });
    // A piece of this process took them: they are its (it may be writing
    // past them), none are published.
    if (!taken_) {
      taken_ = true;
      std::vector<std::string_view> pieces;
      const char* from = bytes_.Room();
      for (size_t i = 0; i < reads_.size(); ++i) {
        pieces.emplace_back(from, std::min(reads_[i]->received, spans_[i].length));
        from += spans_[i].length;
      }
      published = shared_->Publish(pieces);
    }
  }
  if (!published) shared_->PublishNothing();
  // Copied: this process's own buffer is not needed any more.
  if (published) {
    std::lock_guard<std::mutex> lock(mu_);
    bytes_ = ShardBytes();
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
}

GuessedPieceHead::~GuessedPieceHead() {
  if (getpid() != pid_) {
    // A forked child: the threads are the parent's; their handles are left
    // as they are, and so is the buffer they write into.
    for (auto& read : reads_) new std::thread(std::move(read->thread));
    new std::thread(std::move(publisher_));
    new ShardBytes(std::move(bytes_));
  } else {
    for (auto& read : reads_) read->stop.request_stop();
    for (auto& read : reads_) {
      if (read->thread.joinable()) read->thread.join();
    }
    if (shared_ != nullptr) shared_->StopAwaitingWanted();
    if (publisher_.joinable()) publisher_.join();
    // Children still waiting learn there is nothing to come.
    if (shared_ != nullptr) shared_->PublishNothing();
  }
}

char* GuessedPieceHead::Take(uint64_t needed, std::stop_token stop) {
  if (getpid() != pid_) return TakeFromParent(needed, std::move(stop));
  std::lock_guard<std::mutex> lock(mu_);
  if (taken_ || spans_.empty() || bytes_.room() < needed) return nullptr;
  taken_ = true;
  return bytes_.Room();
}

char* GuessedPieceHead::TakeFromParent(uint64_t needed, std::stop_token stop) {
  // mu_ is not used here: a fork may have copied it locked by the
  // parent's threads, which the child does not have.
  if (shared_ == nullptr || taken_ || spans_.empty()) return nullptr;
  taken_ = true;
  shared_->Want();
  std::optional<std::vector<std::string_view>> pieces = shared_->Await(std::move(stop));
  if (!pieces || pieces->size() != spans_.size()) return nullptr;
  // A buffer of this process's own: the one copied at the fork is the
  // parent's, partly written.
  new ShardBytes(std::move(bytes_));
  auto bytes = ShardBytes::Allocate(std::min(version_.size, kMaxRoomBytes),
                                    file_ + " (the parent's guessed head)");
  if (!bytes.ok() || bytes->room() < needed) return nullptr;
  bytes_ = std::move(*bytes);
  char* to = bytes_.Room();
  for (size_t i = 0; i < spans_.size(); ++i) {
    std::memcpy(to, (*pieces)[i].data(), (*pieces)[i].size());
    from_parent_.push_back((*pieces)[i].size());
    to += spans_[i].length;
  }
  return bytes_.Room();
}

std::vector<Result<uint64_t>> GuessedPieceHead::Wait(const std::vector<uint64_t>& needed,
                                                     std::stop_token stop) {
  if (getpid() != pid_) {
    // The parent's bytes, all in (TakeFromParent): a span it has fewer of
    // than needed ended short (the file is shorter than listed).
    std::vector<Result<uint64_t>> out;
    for (size_t i = 0; i < needed.size() && i < from_parent_.size(); ++i) {
      out.emplace_back(std::min(from_parent_[i], needed[i]));
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

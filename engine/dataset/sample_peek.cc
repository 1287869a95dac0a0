#include "engine/dataset/sample_peek.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>

#include "engine/dataset/fork_shared_bytes.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/index/index.h"
#include "stores/http/http_client.h"

namespace sluice {
namespace {

// The format's hooks for reading a sample from the data file alone, or null.
const SamplePeekHooks* PeekHooksOf(const ShardEntry& entry) {
  const ShardFormatDescriptor* format = FindShardFormat(entry.format);
  return format != nullptr ? format->peek : nullptr;
}

}  // namespace

std::vector<DataSpan> PeekFirstReads(const DataSpan& bounds, const DataSpan& likely,
                                     uint64_t file_bytes) {
  const uint64_t bounds_end = bounds.offset + bounds.length;
  const uint64_t likely_end = std::min(file_bytes, likely.offset + likely.length + kPeekSlackBytes);
  // Past the file's end nothing is there to read; the bounds themselves are
  // always asked for (a short answer is the bounds' check to report).
  const uint64_t end = std::max(bounds_end, likely_end);
  if (likely.offset < bounds.offset) return {bounds};
  if (end - bounds.offset <= kPeekOneReadBytes) return {{bounds.offset, end - bounds.offset}};
  // Far from the bounds: the guess beside them, a window around it (the
  // guess may be low or high by what the samples before it vary).
  const uint64_t begin =
      std::max(bounds_end, likely.offset - std::min(likely.offset, kPeekSlackBytes));
  if (likely_end <= begin || likely_end - begin > kPeekOneReadBytes) return {bounds};
  return {bounds, {begin, likely_end - begin}};
}

bool SamplePeekable(const ShardEntry& entry) {
  return !entry.compression && PeekHooksOf(entry) != nullptr;
}

std::string GuessedFirstShard() { return ShardBasename(0, "mds"); }

uint64_t GuessedHeadBytes() {
  ShardEntry mds;
  mds.format = "mds";
  const SamplePeekHooks* hooks = PeekHooksOf(mds);
  return (hooks != nullptr ? hooks->bounds_at(0).offset : 0) + kPeekOneReadBytes;
}

bool GuessAgrees(const ShardEntry& entry, const ObjectStated& stated) {
  // Read before the index was in, of no size: its answer's size is the one
  // check that the object is still the index's (the bytes' count alone
  // passes any object at least as long as the guess).
  return SamplePeekable(entry) && stated.size == entry.raw_data.bytes;
}

namespace {

// What the read's answer stated, the first piece of the outcome published
// to forked children (the ETag is the second, the bytes the third).
struct SharedStated {
  bool size_known = false;
  uint64_t size = 0;
};

}  // namespace

// The read's answer and bytes as the source tells them (on its loop's
// thread): the answer's head wakes Take; a resumed answer of another ETag
// fails the read (its bytes would not be the first answer's object).
class GuessedHead::Progress final : public IntoProgress {
 public:
  explicit Progress(GuessedHead& head) : head_(head) {}
  Status Answered(const ObjectStated& stated) override {
    std::lock_guard<std::mutex> lock(head_.mu_);
    if (head_.answered_) {
      if (!stated.etag.empty() && !head_.stated_.etag.empty() &&
          !SameEtag(stated.etag, head_.stated_.etag)) {
        return CorruptError(head_.arrived_->what() + ": resumed with ETag " + stated.etag +
                            " after " + head_.stated_.etag);
      }
      return Status::Ok();
    }
    head_.stated_ = stated;
    head_.answered_ = true;
    head_.answered_cv_.notify_all();
    return Status::Ok();
  }
  void Received(uint64_t n) override { head_.arrived_->Arrived(0, n); }

 private:
  GuessedHead& head_;
};

GuessedHead::GuessedHead(RemoteSource& remote, std::string key)
    : remote_(remote), key_(std::move(key)), pid_(getpid()) {
  // Without the mapping a forked child reads for itself, as a peek does.
  shared_ = ForkSharedBytes::Map(sizeof(SharedStated) + kMaxSharedEtag + GuessedHeadBytes());
  arrived_ = std::make_shared<ArrivedBytes>(
      GuessedHeadBytes(), remote_.Describe() + "/" + key_ + " (the guessed head)");
  thread_ = std::thread([this] { ReadHead(); });
}

void GuessedHead::ReadHead() {
  const uint64_t asked = GuessedHeadBytes();
  Status status = Status::Ok();
  uint64_t got = 0;
  std::shared_ptr<char[]> room;
  // Only a guess: whatever ends it (an error, even an exception) leaves
  // the bytes that came (the readers of the rest read them themselves);
  // nothing the consumer waits for is lost.
  try {
    // Never zero-filled: only the bytes told as arrived are read.
    room.reset(new char[asked]);
    arrived_->Attach(std::shared_ptr<const char>(room, room.get()));
    ObjectVersion any;  // no size known yet: only told what the answer says
    Progress progress(*this);
    Result<uint64_t> read = remote_.GetRangeOnlyOfVersionInto(key_, 0, asked, any, room.get(),
                                                              progress, stop_.get_token());
    status = read.status();
    if (read.ok()) got = *read;
  } catch (...) {
    status = InternalError(arrived_->what() + ": read ended by an exception");
  }
  ObjectStated stated;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stated = stated_;
  }
  // All that was asked, or the whole (shorter) object: anything less was
  // cut short, and the bytes past it are not there.
  if (status.ok() && (!stated.size || got != std::min(asked, *stated.size))) {
    status = CorruptError(arrived_->what() + ": " + std::to_string(got) + " bytes came of " +
                          (stated.size ? std::to_string(std::min(asked, *stated.size))
                                       : std::string("an answer that stated no size")));
  }
  if (status.ok()) arrived_->Arrived(0, got);
  arrived_->Finish(status);
  // Children see the whole read once it has ended.
  if (shared_ != nullptr) {
    if (status.ok() && got <= GuessedHeadBytes() && stated.etag.size() <= kMaxSharedEtag) {
      const SharedStated told{stated.size.has_value(), stated.size.value_or(0)};
      shared_->Publish({std::string_view(reinterpret_cast<const char*>(&told), sizeof(told)),
                        stated.etag, std::string_view(room.get(), got)});
    } else {
      shared_->PublishNothing();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  answered_cv_.notify_all();
}

GuessedHead::~GuessedHead() {
  if (getpid() != pid_) {
    // A forked child: the thread is the parent's; its handle is left as is,
    // and so are the bytes it writes into (their lock may be the parent's).
    new std::thread(std::move(thread_));
    new std::shared_ptr<ArrivedBytes>(std::move(arrived_));
  } else {
    stop_.request_stop();
    thread_.join();
  }
}

std::optional<GuessedHead::Read> GuessedHead::Take(std::stop_token cancel) {
  if (getpid() != pid_) return TakeFromParent(std::move(cancel));
  std::unique_lock<std::mutex> lock(mu_);
  if (!answered_cv_.wait(lock, cancel, [&] { return answered_ || done_; }) || taken_ ||
      !answered_) {
    return std::nullopt;
  }
  taken_ = true;
  return Read{arrived_, stated_};
}

std::optional<GuessedHead::Read> GuessedHead::TakeFromParent(std::stop_token cancel) {
  // mu_ is not used here: a fork may have copied it locked by the
  // parent's thread, which the child does not have.
  if (shared_ == nullptr || taken_) return std::nullopt;
  taken_ = true;
  std::optional<std::vector<std::string_view>> pieces = shared_->Await(std::move(cancel));
  if (!pieces || pieces->size() != 3 || (*pieces)[0].size() != sizeof(SharedStated)) {
    return std::nullopt;
  }
  SharedStated told;
  std::memcpy(&told, (*pieces)[0].data(), sizeof(told));
  const std::string_view bytes = (*pieces)[2];
  // The published bytes, all arrived, as a Read of this process's own.
  const std::string what = remote_.Describe() + "/" + key_ + " (the parent's guessed head)";
  Read read{std::make_shared<ArrivedBytes>(GuessedHeadBytes(), what), ObjectStated{}};
  std::shared_ptr<char[]> room(new char[std::max<size_t>(bytes.size(), 1)]);
  std::memcpy(room.get(), bytes.data(), bytes.size());
  read.bytes->Attach(std::shared_ptr<const char>(room, room.get()));
  read.bytes->Arrived(0, bytes.size());
  read.bytes->Finish(Status::Ok());
  if (told.size_known) read.stated.size = told.size;
  read.stated.etag.assign((*pieces)[1]);
  return read;
}

Result<PeekedSample> PeekSampleFromRemote(RemoteSource& remote, const std::string& key,
                                          const ShardEntry& entry, uint32_t i,
                                          std::stop_token cancel, GuessedHead* guessed) {
  const std::string where = remote.Describe() + "/" + key + " sample " + std::to_string(i);
  if (!SamplePeekable(entry) || i >= entry.samples) {
    return InvalidArgumentError(
        where + ": cannot be peeked: only a sample of an uncompressed shard whose format locates "
                "it in the data file can (this is a " + entry.format + " shard" +
        (entry.compression ? ", compressed with " + *entry.compression : std::string()) + ", " +
        std::to_string(entry.samples) + " samples)");
  }
  const SamplePeekHooks& hooks = *PeekHooksOf(entry);
  auto cancelled = [&](const char* before) -> Status {
    if (!cancel.stop_requested()) return Status::Ok();
    return CancelledError(where + ": peek cancelled before " + before);
  };
  const DataSpan bounds_at = hooks.bounds_at(i);
  const std::vector<DataSpan> first =
      PeekFirstReads(bounds_at, hooks.likely_span(entry, i), entry.raw_data.bytes);
  std::optional<GuessedHead::Read> guess;
  if (guessed != nullptr && guessed->key() == key) guess = guessed->Take(cancel);
  if (guess && !GuessAgrees(entry, guess->stated)) guess.reset();
  // Every read names the size the index gives the file: a file rewritten
  // to another size since is kCorrupt before any of its bytes is used.
  // Beside the guess's bytes, they ask for the version those came from.
  const ObjectVersion of_index(guess ? guess->stated.etag : std::string(), entry.raw_data.bytes);
  std::shared_ptr<ArrivedBytes> head;
  if (guess) head = std::move(guess->bytes);
  guess.reset();
  SLUICE_RETURN_IF_ERROR(cancelled("reading its offsets entry"));
  // The first reads the guessed head holds (through the file's end, where
  // it has it all) are taken from it as their bytes arrive; the rest asked
  // for as ever.
  const uint64_t head_end = head ? std::min(GuessedHeadBytes(), entry.raw_data.bytes) : 0;
  auto in_head = [&](uint64_t offset, uint64_t length) {
    return head && offset <= entry.raw_data.bytes &&
           std::min(offset + length, entry.raw_data.bytes) <= head_end;
  };
  // Bytes [offset, offset + length) of the head (cut at the file's end),
  // once they have arrived; nullopt when its read ended without them (then
  // read as without the guess, which is dropped), kCancelled on `cancel`.
  auto from_head = [&](uint64_t offset, uint64_t length) -> Result<std::optional<std::string>> {
    const uint64_t n = std::min(offset + length, entry.raw_data.bytes) - offset;
    Result<std::optional<std::string_view>> got = head->Await(offset, n, /*wait=*/true, cancel);
    SLUICE_RETURN_IF_ERROR(cancelled("its bytes arrived"));
    if (!got.ok() || !*got) {
      head.reset();
      return std::optional<std::string>();
    }
    return std::optional<std::string>(std::string(**got));
  };
  std::vector<DataSpan> ask;
  for (const DataSpan& span : first) {
    if (!in_head(span.offset, span.length)) ask.push_back(span);
  }
  std::vector<Result<std::string>> asked;
  if (!ask.empty()) asked = remote.GetRangesOnlyOfVersion(key, ask, of_index, cancel);
  // got[k]: first[k]'s bytes when it was asked for (none when the head holds it).
  std::vector<std::optional<Result<std::string>>> got(first.size());
  for (size_t k = 0, next = 0; k < first.size(); ++k) {
    if (!in_head(first[k].offset, first[k].length)) got[k] = std::move(asked[next++]);
  }
  // The bounds, from the head when it holds them and they come, else read.
  std::string bounds;
  if (!got[0]) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> arrived,
                            from_head(bounds_at.offset, bounds_at.length));
    if (!arrived) {
      got[0] = remote.GetRangeOnlyOfVersion(key, first[0].offset, first[0].length, of_index,
                                            cancel);
    } else {
      bounds = std::move(*arrived);
    }
  }
  if (got[0]) {
    // The bounds' read decides; a failed guess is only a guess that missed.
    if (!got[0]->ok()) return got[0]->status();
    bounds = std::string_view(**got[0]).substr(0, bounds_at.length);
  }
  SLUICE_ASSIGN_OR_RETURN(DataSpan span, hooks.sample_span(entry, i, bounds, where));
  if (span.length > kMaxPeekedSampleBytes) {
    return InvalidArgumentError(where + ": " + std::to_string(span.length) +
                                " bytes, more than a peek reads (" +
                                std::to_string(kMaxPeekedSampleBytes) + ")");
  }
  const uint64_t end = span.offset + span.length;
  std::string bytes;
  bool held = false;
  if (in_head(span.offset, span.length)) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> arrived,
                            from_head(span.offset, span.length));
    if (arrived) {
      bytes = std::move(*arrived);
      held = true;
    }
  }
  for (size_t k = 0; k < first.size() && !held; ++k) {
    if (!got[k] || !got[k]->ok()) continue;
    std::string& read = **got[k];
    if (span.offset < first[k].offset ||
        end > first[k].offset + std::min<uint64_t>(read.size(), first[k].length)) {
      continue;
    }
    // A first read held it: keep its bytes alone (no second buffer).
    read.erase(0, span.offset - first[k].offset);
    read.resize(span.length);
    read.shrink_to_fit();
    bytes = std::move(read);
    held = true;
  }
  got.clear();
  head.reset();
  if (!held) {
    SLUICE_RETURN_IF_ERROR(cancelled("reading its bytes"));
    SLUICE_ASSIGN_OR_RETURN(
        bytes, remote.GetRangeOnlyOfVersion(key, span.offset, span.length, of_index, cancel));
  }
  if (bytes.size() != span.length) {
    return CorruptError(where + ": bytes " + std::to_string(span.offset) + ".." +
                        std::to_string(end) + ": got " + std::to_string(bytes.size()) + " bytes");
  }
  PeekedSample peeked;
  peeked.bytes = std::make_unique<const std::string>(std::move(bytes));
  peeked.raw = *peeked.bytes;
  SLUICE_RETURN_IF_ERROR(hooks.split_sample(entry, i, span.offset, peeked.raw, &peeked.fields));
  return peeked;
}

namespace {

// Bytes of a data file in flight: a copy of them (a file's), or a view
// into a buffer `keep` holds (a single pass's shard).
struct InFlightBytes {
  std::unique_ptr<const std::string> owned;
  std::string_view view;
  std::shared_ptr<const void> keep;
};
// Bytes [offset, offset + length) of a data file in flight: nullopt when
// they do not come from there.
using InFlightRead = std::function<Result<std::optional<InFlightBytes>>(uint64_t, uint64_t)>;

// PeekSampleFromFill over `read`, of a file of `total` bytes when whole.
Result<std::optional<PeekedSample>> PeekSampleInFlight(const ShardEntry& entry, uint32_t i,
                                                       uint64_t total, const InFlightRead& read) {
  using Maybe = std::optional<PeekedSample>;
  if (!SamplePeekable(entry) || i >= entry.samples || total != entry.raw_data.bytes) {
    return Maybe();
  }
  const SamplePeekHooks& hooks = *PeekHooksOf(entry);
  const DataSpan bounds_at = hooks.bounds_at(i);
  SLUICE_ASSIGN_OR_RETURN(std::optional<InFlightBytes> bounds,
                          read(bounds_at.offset, bounds_at.length));
  if (!bounds) return Maybe();
  const std::string where =
      entry.raw_data.basename + " sample " + std::to_string(i) + " (in flight)";
  SLUICE_ASSIGN_OR_RETURN(DataSpan span, hooks.sample_span(entry, i, bounds->view, where));
  if (span.length > kMaxPeekedSampleBytes) return Maybe();
  SLUICE_ASSIGN_OR_RETURN(std::optional<InFlightBytes> bytes, read(span.offset, span.length));
  if (!bytes) return Maybe();
  PeekedSample peeked;
  peeked.bytes = std::move(bytes->owned);
  peeked.raw = bytes->view;
  peeked.keep = std::move(bytes->keep);
  SLUICE_RETURN_IF_ERROR(hooks.split_sample(entry, i, span.offset, peeked.raw, &peeked.fields));
  return Maybe(std::move(peeked));
}

}  // namespace

Result<std::optional<PeekedSample>> PeekSampleFromFill(FillWatermark& fill, const ShardEntry& entry,
                                                       uint32_t i, bool wait,
                                                       std::stop_token stop, bool* blocked) {
  return PeekSampleInFlight(
      entry, i, fill.total(),
      [&](uint64_t offset, uint64_t length) -> Result<std::optional<InFlightBytes>> {
        SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> got,
                                fill.Read(offset, length, wait, stop, blocked));
        if (!got) return std::optional<InFlightBytes>();
        InFlightBytes out;
        out.owned = std::make_unique<const std::string>(std::move(*got));
        out.view = *out.owned;
        return std::optional<InFlightBytes>(std::move(out));
      });
}

Result<std::optional<PeekedSample>> PeekSampleFromArrived(std::shared_ptr<ArrivedBytes> arrived,
                                                          const ShardEntry& entry, uint32_t i,
                                                          bool wait, std::stop_token stop,
                                                          bool* blocked) {
  return PeekSampleInFlight(
      entry, i, arrived->total(),
      [&](uint64_t offset, uint64_t length) -> Result<std::optional<InFlightBytes>> {
        SLUICE_ASSIGN_OR_RETURN(std::optional<std::string_view> view,
                                arrived->Await(offset, length, wait, stop, blocked));
        if (!view) return std::optional<InFlightBytes>();
        // Not copied: viewed where it arrived, the buffer kept with the
        // record (ArrivedBytes keeps it; arrived bytes never change).
        InFlightBytes out;
        out.view = *view;
        out.keep = arrived;
        return std::optional<InFlightBytes>(std::move(out));
      });
}

}  // namespace sluice

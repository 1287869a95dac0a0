#include "engine/dataset/sample_peek.h"

#include <algorithm>
#include <utility>

#include <unistd.h>

#include "formats/dataset/format_descriptor.h"
#include "formats/index/index.h"

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

bool GuessAgrees(const ShardEntry& entry, std::string_view head) {
  return SamplePeekable(entry) && head.size() <= entry.raw_data.bytes &&
         (head.size() == GuessedHeadBytes() || head.size() == entry.raw_data.bytes);
}

GuessedHead::GuessedHead(RemoteSource& remote, std::string key)
    : remote_(remote), key_(std::move(key)), pid_(getpid()) {
  thread_ = std::thread([this] {
    std::optional<std::string> bytes;
    // Only a guess: whatever ends it (an error, even an exception) leaves
    // no bytes, and the peek reads as it would without them; nothing the
    // consumer waits for is lost.
    try {
      Result<std::string> read = remote_.GetRangeOnly(key_, 0, GuessedHeadBytes(), stop_.get_token());
      if (read.ok()) bytes = std::move(*read);
    } catch (...) {
      bytes.reset();
    }
    std::lock_guard<std::mutex> lock(mu_);
    bytes_ = std::move(bytes);
    done_ = true;
    done_cv_.notify_all();
  });
}

GuessedHead::~GuessedHead() {
  if (getpid() != pid_) {
    // A forked child: the thread is the parent's; its handle is left as is.
    new std::thread(std::move(thread_));
    return;
  }
  stop_.request_stop();
  thread_.join();
}

std::optional<std::string> GuessedHead::Take(std::stop_token cancel) {
  if (getpid() != pid_) return std::nullopt;
  std::unique_lock<std::mutex> lock(mu_);
  if (!done_cv_.wait(lock, cancel, [&] { return done_; }) || taken_) return std::nullopt;
  taken_ = true;
  return std::exchange(bytes_, std::nullopt);
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
  std::optional<std::string> head;
  if (guessed != nullptr && guessed->key() == key) head = guessed->Take(cancel);
  if (head && !GuessAgrees(entry, *head)) head.reset();
  SLUICE_RETURN_IF_ERROR(cancelled("reading its offsets entry"));
  // The first reads the guessed head holds (through the file's end, where
  // it has it all) are taken from it; the rest asked for as ever.
  auto in_head = [&](const DataSpan& span) {
    return head && std::min(span.offset + span.length, entry.raw_data.bytes) <= head->size();
  };
  std::vector<DataSpan> ask;
  for (const DataSpan& span : first) {
    if (!in_head(span)) ask.push_back(span);
  }
  std::vector<Result<std::string>> asked;
  if (!ask.empty()) asked = remote.GetRangesOnly(key, ask, cancel);
  std::vector<Result<std::string>> got;
  got.reserve(first.size());
  for (size_t k = 0, next = 0; k < first.size(); ++k) {
    if (in_head(first[k])) {
      got.emplace_back(head->substr(first[k].offset, first[k].length));
    } else {
      got.push_back(std::move(asked[next++]));
    }
  }
  head.reset();
  // The bounds' read decides; a failed guess is only a guess that missed.
  if (!got[0].ok()) return got[0].status();
  SLUICE_ASSIGN_OR_RETURN(
      DataSpan span,
      hooks.sample_span(entry, i, std::string_view(*got[0]).substr(0, bounds_at.length), where));
  if (span.length > kMaxPeekedSampleBytes) {
    return InvalidArgumentError(where + ": " + std::to_string(span.length) +
                                " bytes, more than a peek reads (" +
                                std::to_string(kMaxPeekedSampleBytes) + ")");
  }
  const uint64_t end = span.offset + span.length;
  std::string bytes;
  bool held = false;
  for (size_t k = 0; k < first.size() && !held; ++k) {
    if (!got[k].ok()) continue;
    std::string& read = *got[k];
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
  if (!held) {
    SLUICE_RETURN_IF_ERROR(cancelled("reading its bytes"));
    SLUICE_ASSIGN_OR_RETURN(bytes, remote.GetRangeOnly(key, span.offset, span.length, cancel));
  }
  if (bytes.size() != span.length) {
    return CorruptError(where + ": bytes " + std::to_string(span.offset) + ".." +
                        std::to_string(end) + ": got " + std::to_string(bytes.size()) + " bytes");
  }
  PeekedSample peeked;
  peeked.bytes = std::make_unique<const std::string>(std::move(bytes));
  SLUICE_RETURN_IF_ERROR(hooks.split_sample(entry, i, span.offset, *peeked.bytes, &peeked.fields));
  return peeked;
}

Result<std::optional<PeekedSample>> PeekSampleFromFill(FillWatermark& fill, const ShardEntry& entry,
                                                       uint32_t i, bool wait,
                                                       std::stop_token stop, bool* blocked) {
  using Maybe = std::optional<PeekedSample>;
  if (!SamplePeekable(entry) || i >= entry.samples || fill.total() != entry.raw_data.bytes) {
    return Maybe();
  }
  const SamplePeekHooks& hooks = *PeekHooksOf(entry);
  const DataSpan bounds_at = hooks.bounds_at(i);
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> bounds,
                          fill.Read(bounds_at.offset, bounds_at.length, wait, stop, blocked));
  if (!bounds) return Maybe();
  const std::string where =
      entry.raw_data.basename + " sample " + std::to_string(i) + " (in flight)";
  SLUICE_ASSIGN_OR_RETURN(DataSpan span, hooks.sample_span(entry, i, *bounds, where));
  if (span.length > kMaxPeekedSampleBytes) return Maybe();
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                          fill.Read(span.offset, span.length, wait, stop, blocked));
  if (!bytes) return Maybe();
  PeekedSample peeked;
  peeked.bytes = std::make_unique<const std::string>(std::move(*bytes));
  SLUICE_RETURN_IF_ERROR(hooks.split_sample(entry, i, span.offset, *peeked.bytes, &peeked.fields));
  return Maybe(std::move(peeked));
}

}  // namespace sluice

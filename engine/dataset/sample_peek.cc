#include "engine/dataset/sample_peek.h"

#include <algorithm>
#include <utility>

#include "formats/dataset/format_descriptor.h"

namespace sluice {
namespace {

// The format's hooks for reading a sample from the data file alone, or null.
const SamplePeekHooks* PeekHooksOf(const ShardEntry& entry) {
  const ShardFormatDescriptor* format = FindShardFormat(entry.format);
  return format != nullptr ? format->peek : nullptr;
}

}  // namespace

DataSpan PeekFirstRead(const DataSpan& bounds, const DataSpan& likely, uint64_t file_bytes) {
  const uint64_t bounds_end = bounds.offset + bounds.length;
  // Past the file's end nothing is there to read; the bounds themselves are
  // always asked for (a short answer is the bounds' check to report).
  const uint64_t end =
      std::max(bounds_end, std::min(file_bytes, likely.offset + likely.length + kPeekSlackBytes));
  if (likely.offset < bounds.offset || end - bounds.offset > kPeekOneReadBytes) return bounds;
  return {bounds.offset, end - bounds.offset};
}

bool SamplePeekable(const ShardEntry& entry) {
  return !entry.compression && PeekHooksOf(entry) != nullptr;
}

Result<PeekedSample> PeekSampleFromRemote(RemoteSource& remote, const std::string& key,
                                          const ShardEntry& entry, uint32_t i,
                                          std::stop_token cancel) {
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
  const DataSpan first =
      PeekFirstRead(bounds_at, hooks.likely_span(entry, i), entry.raw_data.bytes);
  SLUICE_RETURN_IF_ERROR(cancelled("reading its offsets entry"));
  SLUICE_ASSIGN_OR_RETURN(std::string head,
                          remote.GetRangeOnly(key, first.offset, first.length, cancel));
  SLUICE_ASSIGN_OR_RETURN(
      DataSpan span,
      hooks.sample_span(entry, i, std::string_view(head).substr(0, bounds_at.length), where));
  if (span.length > kMaxPeekedSampleBytes) {
    return InvalidArgumentError(where + ": " + std::to_string(span.length) +
                                " bytes, more than a peek reads (" +
                                std::to_string(kMaxPeekedSampleBytes) + ")");
  }
  const uint64_t end = span.offset + span.length;
  std::string bytes;
  if (span.offset >= first.offset &&
      end <= first.offset + std::min<uint64_t>(head.size(), first.length)) {
    // The first read held it: keep its bytes alone (no second buffer).
    head.erase(0, span.offset - first.offset);
    head.resize(span.length);
    head.shrink_to_fit();
    bytes = std::move(head);
  } else {
    head = std::string();
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

}  // namespace sluice

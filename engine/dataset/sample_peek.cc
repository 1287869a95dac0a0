#include "engine/dataset/sample_peek.h"

#include <utility>

#include "base/bytes.h"
#include "formats/mds/mds_shard_reader.h"

namespace sluice {

Result<PeekedSample> PeekMdsSample(RemoteSource& remote, const std::string& key,
                                   const ShardEntry& entry, uint32_t i,
                                   std::stop_token cancel) {
  const std::string where = remote.Describe() + "/" + key + " sample " + std::to_string(i);
  if (entry.format != "mds" || entry.compression || i >= entry.samples) {
    return InvalidArgumentError(where + ": only a sample of an uncompressed MDS shard (of " +
                                std::to_string(entry.samples) + " samples) can be peeked");
  }
  auto cancelled = [&](const char* before) -> Status {
    if (!cancel.stop_requested()) return Status::Ok();
    return CancelledError(where + ": peek cancelled before " + before);
  };
  const uint64_t entry_at = MdsOffsetEntryAt(i);
  SLUICE_RETURN_IF_ERROR(cancelled("reading its offsets entry"));
  SLUICE_ASSIGN_OR_RETURN(std::string bounds, remote.GetRangeOnly(key, entry_at, 8, cancel));
  if (bounds.size() != 8) {
    return CorruptError(where + ": offsets entry at " + std::to_string(entry_at) + ": got " +
                        std::to_string(bounds.size()) + " bytes, expected 8");
  }
  const uint64_t begin = LoadLE<uint32_t>(bounds.data());
  const uint64_t end = LoadLE<uint32_t>(bounds.data() + 4);
  const uint64_t table_end = MdsOffsetsTableEnd(entry.samples);
  if (begin < table_end || end < begin || end > entry.raw_data.bytes) {
    return CorruptError(where + ": offsets " + std::to_string(begin) + ".." + std::to_string(end) +
                        " at " + std::to_string(entry_at) + ", expected ordered, from " +
                        std::to_string(table_end) + " (the offsets table's end) up to " +
                        std::to_string(entry.raw_data.bytes) + " (the shard's size)");
  }
  if (end - begin > kMaxPeekedSampleBytes) {
    return InvalidArgumentError(where + ": " + std::to_string(end - begin) +
                                " bytes, more than a peek reads (" +
                                std::to_string(kMaxPeekedSampleBytes) + ")");
  }
  SLUICE_RETURN_IF_ERROR(cancelled("reading its bytes"));
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, remote.GetRangeOnly(key, begin, end - begin, cancel));
  if (bytes.size() != end - begin) {
    return CorruptError(where + ": bytes " + std::to_string(begin) + ".." + std::to_string(end) +
                        ": got " + std::to_string(bytes.size()) + " bytes");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<ColumnEncoding> columns,
                          MdsColumnsFromEntry(entry, entry.raw_data.basename));
  PeekedSample peeked;
  peeked.bytes = std::make_unique<const std::string>(std::move(bytes));
  SLUICE_RETURN_IF_ERROR(SplitMdsSample(*peeked.bytes, columns, entry.raw_data.basename, i, begin,
                                        &peeked.fields));
  return peeked;
}

}  // namespace sluice

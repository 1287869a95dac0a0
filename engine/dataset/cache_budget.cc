#include "engine/dataset/cache_budget.h"

#include <algorithm>

#include "engine/planner/mosaic_error.h"
#include "formats/dataset/format_descriptor.h"

namespace sluice {
namespace {

EntryCost Cost(const FileRef& raw, const std::optional<FileRef>& zip,
               const std::optional<std::string>& compression, bool keep_zip) {
  EntryCost c{raw.bytes, raw.bytes};
  if (compression && zip) {
    c.fetching += zip->bytes;
    if (keep_zip) c.kept += zip->bytes;
  }
  return c;
}

std::string DescribeFile(const char* what, const FileRef& raw, const std::optional<FileRef>& zip,
                         const std::optional<std::string>& compression, bool keep_zip) {
  std::string s = std::string(what) + " '" + std::string(raw.basename) + "' " +
                  std::to_string(raw.bytes) + " bytes";
  if (compression && zip) {
    s += " + compressed '" + std::string(zip->basename) + "' " + std::to_string(zip->bytes) +
         " bytes" +
         (keep_zip ? " (kept: keep_zip)" : " (while it is fetched)");
  }
  return s;
}

}  // namespace

EntryCost DataCost(const ShardRef& e, bool keep_zip) {
  return Cost(e.raw_data, e.zip_data, e.compression(), keep_zip);
}

EntryCost MetaCost(const ShardRef& e, bool keep_zip) {
  const std::optional<FileRef> meta = MetaFileOf(e);
  if (!meta) return {};
  return Cost(*meta, e.zip_meta, e.compression(), keep_zip);
}

WorkingSet MinimalWorkingSet(const ShardTable& index, bool keep_zip) {
  WorkingSet best;
  for (size_t i = 0; i < index.size(); ++i) {
    const ShardRef e = index.ref(i);
    EntryCost data = DataCost(e, keep_zip);
    EntryCost meta = MetaCost(e, keep_zip);
    uint64_t need = std::max(data.fetching, data.kept + meta.fetching);
    if (need > best.bytes) best = {need, i};
  }
  return best;
}

std::string DescribeWorkingSet(const ShardTable& index, size_t i, bool keep_zip) {
  const ShardRef e = index.ref(i);
  if (e.piece && e.row_group) {
    return "shard " + std::to_string(i) + ": row group " + std::to_string(*e.row_group) + " of " +
           std::string(e.piece->file) + " (" + std::to_string(e.piece->length) +
           " bytes of column chunks and a " + std::to_string(e.piece->tail_bytes) +
           "-byte footer)";
  }
  std::string s = "shard " + std::to_string(i) + ": " +
                  DescribeFile("data", e.raw_data, e.zip_data, e.compression(), keep_zip);
  if (const std::optional<FileRef> meta = MetaFileOf(e)) {
    s += ", then with the data pinned " +
         DescribeFile("meta", *meta, e.zip_meta, e.compression(), keep_zip);
  }
  return s;
}

Result<std::vector<std::optional<uint64_t>>> SplitCacheLimit(
    uint64_t limit, const std::vector<StreamBudget>& streams) {
  std::vector<std::optional<uint64_t>> shares(streams.size());
  uint64_t minimal = 0, wanted = 0;
  std::string parts;
  for (const StreamBudget& s : streams) {
    if (!s.cached) continue;
    minimal += s.minimal.bytes;
    wanted += s.kept > s.minimal.bytes ? s.kept - s.minimal.bytes : 0;
    parts += std::string(parts.empty() ? "" : "; ") + s.describe + " " +
             std::to_string(s.minimal.bytes) + " bytes";
  }
  if (limit < minimal) {
    return InvalidArgumentError(
        "cache_limit " + std::to_string(limit) + " bytes (one limit over all streams' caches) "
        "cannot hold one reader's working set of every cached stream at once: " +
        std::to_string(minimal) + " bytes needed (" + parts + "); raise cache_limit to at least " +
        std::to_string(minimal) + " bytes");
  }
  const uint64_t rest = limit - minimal;
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamBudget& s = streams[i];
    if (!s.cached) continue;
    uint64_t want = s.kept > s.minimal.bytes ? s.kept - s.minimal.bytes : 0;
    uint64_t extra = wanted <= rest ? want
                                    : static_cast<uint64_t>(static_cast<unsigned __int128>(rest) *
                                                            want / wanted);
    shares[i] = s.minimal.bytes + extra;
  }
  return shares;
}

uint64_t StreamWholeBytes(const ShardTable& index, bool keep_zip) {
  uint64_t total = 0, beyond = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    const ShardRef e = index.ref(i);
    const EntryCost data = DataCost(e, keep_zip);
    const EntryCost meta = MetaCost(e, keep_zip);
    const uint64_t kept = data.kept + meta.kept;
    const uint64_t need = std::max(data.fetching, data.kept + meta.fetching);
    total += kept;
    if (need > kept) beyond = std::max(beyond, need - kept);
  }
  return total + beyond;
}

namespace {

// Mosaic's get_max_size: the raw files, plus the compressed ones when every
// file of the shard has one (its get_zip_size is None otherwise).
uint64_t MosaicMaxShardBytes(const ShardRef& e) {
  const std::optional<FileRef> raw_meta = MetaFileOf(e);
  uint64_t raw = e.raw_data.bytes + (raw_meta ? raw_meta->bytes : 0);
  const bool zipped = e.zip_data && (!e.has_meta || e.zip_meta);
  uint64_t zip = zipped ? e.zip_data->bytes + (e.has_meta ? e.zip_meta->bytes : 0) : 0;
  return raw + zip;
}

}  // namespace

Status CheckMosaicCacheLimit(uint64_t limit, uint64_t index_bytes,
                             const std::vector<const ShardTable*>& indexes) {
  if (limit <= index_bytes) {
    return planner::MosaicValueError(
        "Minimum cache usage (" + std::to_string(index_bytes) + " bytes) is larger than the cache "
        "limit (" + std::to_string(limit) + " bytes). Please raise `cache_limit`. Recommendation "
        "is to provide a `cache_limit` as high as possible to avoid thrashing.");
  }
  uint64_t largest = 0;
  for (const ShardTable* index : indexes) {
    for (size_t i = 0; i < index->size(); ++i) {
      largest = std::max(largest, MosaicMaxShardBytes(index->ref(i)));
    }
  }
  // largest < 2^50 (ParseIndex bounds each file below 2^48): no overflow.
  if (limit < 4 * largest) {
    return planner::MosaicValueError(
        "Cache limit (" + std::to_string(limit) + " bytes) is too low. Increase the `cache_limit` "
        "to at-least four times the largest shard size (" + std::to_string(largest) + " bytes) "
        "which includes raw (decompressed) and zip (compressed) file size. Recommendation is to "
        "provide a `cache_limit` as high as possible to avoid thrashing.");
  }
  return Status::Ok();
}

}  // namespace sluice

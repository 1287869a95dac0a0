#include "engine/dataset/cache_budget.h"

#include <algorithm>

namespace sluice {
namespace {

EntryCost Cost(const FileInfo& raw, const std::optional<FileInfo>& zip,
               const std::optional<std::string>& compression, bool keep_zip) {
  EntryCost c{raw.bytes, raw.bytes};
  if (compression && zip) {
    c.fetching += zip->bytes;
    if (keep_zip) c.kept += zip->bytes;
  }
  return c;
}

std::string DescribeFile(const char* what, const FileInfo& raw, const std::optional<FileInfo>& zip,
                         const std::optional<std::string>& compression, bool keep_zip) {
  std::string s = std::string(what) + " '" + raw.basename + "' " + std::to_string(raw.bytes) +
                  " bytes";
  if (compression && zip) {
    s += " + compressed '" + zip->basename + "' " + std::to_string(zip->bytes) + " bytes" +
         (keep_zip ? " (kept: keep_zip)" : " (while it is fetched)");
  }
  return s;
}

}  // namespace

EntryCost DataCost(const ShardEntry& e, bool keep_zip) {
  return Cost(e.raw_data, e.zip_data, e.compression, keep_zip);
}

EntryCost MetaCost(const ShardEntry& e, bool keep_zip) {
  if (e.format == "mds" || !e.raw_meta) return {};
  return Cost(*e.raw_meta, e.zip_meta, e.compression, keep_zip);
}

WorkingSet MinimalWorkingSet(const Index& index, bool keep_zip) {
  WorkingSet best;
  for (size_t i = 0; i < index.shards.size(); ++i) {
    EntryCost data = DataCost(index.shards[i], keep_zip);
    EntryCost meta = MetaCost(index.shards[i], keep_zip);
    uint64_t need = std::max(data.fetching, data.kept + meta.fetching);
    if (need > best.bytes) best = {need, i};
  }
  return best;
}

std::string DescribeWorkingSet(const Index& index, size_t i, bool keep_zip) {
  const ShardEntry& e = index.shards[i];
  std::string s = "shard " + std::to_string(i) + ": " +
                  DescribeFile("data", e.raw_data, e.zip_data, e.compression, keep_zip);
  if (e.format != "mds" && e.raw_meta) {
    s += ", then with the data pinned " +
         DescribeFile("meta", *e.raw_meta, e.zip_meta, e.compression, keep_zip);
  }
  return s;
}

uint64_t StreamKeptBytes(const Index& index, bool keep_zip) {
  uint64_t total = 0;
  for (const ShardEntry& e : index.shards) {
    total += DataCost(e, keep_zip).kept + MetaCost(e, keep_zip).kept;
  }
  return total;
}

}  // namespace sluice

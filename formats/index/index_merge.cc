// merge_index: sub-datasets' index.json files as one, their basenames put
// under each sub-dataset's folder name.
#include <string>

#include "formats/index/index.h"

namespace sluice {
namespace {

// os.path.join(prefix, name) for a relative `name`.
std::string JoinPrefix(std::string_view prefix, const std::string& name) {
  if (prefix.empty()) return name;
  std::string out(prefix);
  if (out.back() != '/') out.push_back('/');
  return out + name;
}

Status Prefix(FileInfo& file, const IndexPart& part, size_t shard) {
  file.basename = JoinPrefix(part.prefix, file.basename);
  if (IsSafeBasename(file.basename)) return Status::Ok();
  return InvalidArgumentError(std::string(part.source) + ": shard " + std::to_string(shard) +
                              ": folder name '" + std::string(part.prefix) +
                              "' makes an unsafe basename '" + file.basename + "'");
}

Status Prefix(std::optional<FileInfo>& file, const IndexPart& part, size_t shard) {
  return file ? Prefix(*file, part, shard) : Status::Ok();
}

}  // namespace

Result<std::string> MergeIndexes(const std::vector<IndexPart>& parts) {
  Index merged;
  for (const IndexPart& part : parts) {
    SLUICE_ASSIGN_OR_RETURN(Index index, ParseIndex(part.text, part.source));
    for (size_t i = 0; i < index.shards.size(); ++i) {
      ShardEntry& entry = index.shards[i];
      SLUICE_RETURN_IF_ERROR(Prefix(entry.raw_data, part, i));
      SLUICE_RETURN_IF_ERROR(Prefix(entry.zip_data, part, i));
      SLUICE_RETURN_IF_ERROR(Prefix(entry.raw_meta, part, i));
      SLUICE_RETURN_IF_ERROR(Prefix(entry.zip_meta, part, i));
      merged.shards.push_back(std::move(entry));
    }
  }
  return SerializeIndexMerged(merged);
}

}  // namespace sluice

#include "formats/text/split_shard_lines.h"

#include "base/utf8.h"

namespace sluice {

Result<SplitShardLines> SplitShardLines::Declared(const ShardEntry& entry) {
  SplitShardLines l;
  l.data_name_ = entry.raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(l.columns_, TextColumnsFromEntry(entry));
  l.newline_ = entry.newline.value_or("\n");
  if (l.newline_.empty()) return CorruptError(l.data_name_ + ": empty newline in index entry");
  return l;
}

Status SplitShardLines::Attach(const ShardEntry& entry, std::string_view data,
                               std::string_view meta, uint32_t first_offset) {
  const std::string meta_name = entry.raw_meta ? entry.raw_meta->basename : data_name_ + ".meta";
  SLUICE_ASSIGN_OR_RETURN(meta_, SplitMeta::Parse(meta, data.size(), entry.samples, first_offset,
                                                  meta_name, data_name_));
  data_ = data;
  return Status::Ok();
}

Result<std::string_view> SplitShardLines::Line(uint32_t i) const {
  if (i >= size()) {
    return OutOfRangeError(data_name_ + ": sample " + std::to_string(i) +
                           " out of range (shard has " + std::to_string(size()) + ")");
  }
  uint32_t begin = meta_.offset(i), end = meta_.offset(i + 1);
  return data_.substr(begin, end - begin);
}

Result<std::string_view> SplitShardLines::Text(uint32_t i) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view line, Line(i));
  const uint64_t begin = meta_.offset(i);
  if (line.size() < newline_.size() || line.substr(line.size() - newline_.size()) != newline_) {
    return CorruptError(Where(i, begin) + ": line does not end with the shard's newline");
  }
  std::string_view text = line.substr(0, line.size() - newline_.size());
  if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return CorruptError(Where(i, begin + bad) + ": invalid UTF-8");
  }
  return text;
}

std::string SplitShardLines::Where(uint32_t i, uint64_t offset) const {
  return data_name_ + ": sample " + std::to_string(i) + " at byte " + std::to_string(offset);
}

}  // namespace sluice

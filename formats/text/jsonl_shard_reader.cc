#include "formats/text/jsonl_shard_reader.h"

#include <algorithm>

namespace sluice {

Result<JsonlShardReader> JsonlShardReader::Open(const ShardEntry& entry,
                                                std::string_view data,
                                                std::string_view meta) {
  JsonlShardReader r;
  r.data_name_ = entry.raw_data.basename;
  if (entry.format != "json") {
    return InvalidArgumentError(r.data_name_ + ": format '" + entry.format +
                                "' is not a JSONL shard");
  }
  SLUICE_ASSIGN_OR_RETURN(r.columns_, TextColumnsFromEntry(entry));
  r.newline_ = entry.newline.value_or("\n");
  if (r.newline_.empty()) return CorruptError(r.data_name_ + ": empty newline in index entry");
  const std::string meta_name =
      entry.raw_meta ? entry.raw_meta->basename : r.data_name_ + ".meta";
  SLUICE_ASSIGN_OR_RETURN(r.meta_, SplitMeta::Parse(meta, data.size(), entry.samples,
                                                    /*first_offset=*/0, meta_name,
                                                    r.data_name_));
  r.data_ = data;
  return r;
}

Result<std::string_view> JsonlShardReader::Line(uint32_t i) const {
  if (i >= size()) {
    return OutOfRangeError(data_name_ + ": sample " + std::to_string(i) +
                           " out of range (shard has " + std::to_string(size()) + ")");
  }
  uint32_t begin = meta_.offset(i), end = meta_.offset(i + 1);
  return data_.substr(begin, end - begin);
}

Result<JsonValue> JsonlShardReader::Sample(uint32_t i) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view line, Line(i));
  const uint32_t begin = meta_.offset(i);
  auto where = [&](uint64_t off) {
    return data_name_ + ": sample " + std::to_string(i) + " at byte " + std::to_string(off);
  };
  if (line.size() < newline_.size() ||
      line.substr(line.size() - newline_.size()) != newline_) {
    return CorruptError(where(begin) + ": line does not end with the shard's newline");
  }
  std::string_view text = line.substr(0, line.size() - newline_.size());
  if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return CorruptError(where(begin + bad) + ": invalid UTF-8");
  }
  auto parsed = ParsePyJson(text);
  if (!parsed.ok()) {
    return CorruptError(where(begin) + ": line is not JSON: " + parsed.status().message());
  }
  const auto* obj = std::get_if<JsonValue::Object>(&parsed->v);
  if (obj == nullptr) {
    return CorruptError(where(begin) + ": expected a JSON object");
  }
  if (obj->size() != columns_.size()) {
    return CorruptError(where(begin) + ": object has " + std::to_string(obj->size()) +
                        " keys, expected the " + std::to_string(columns_.size()) +
                        " declared columns");
  }
  std::vector<bool> seen(columns_.size(), false);
  for (const auto& [key, value] : *obj) {
    // Columns are sorted by name (TextColumnsFromEntry checks).
    auto it = std::lower_bound(
        columns_.begin(), columns_.end(), key,
        [](const TextColumn& col, const std::string& k) { return col.name < k; });
    const size_t c = static_cast<size_t>(it - columns_.begin());
    if (it == columns_.end() || it->name != key) {
      return CorruptError(where(begin) + ": undeclared key '" + key + "'");
    }
    if (seen[c]) return CorruptError(where(begin) + ": duplicate key '" + key + "'");
    seen[c] = true;
    bool ok = false;
    switch (columns_[c].encoding) {
      case TextEncoding::kStr: ok = std::holds_alternative<std::string>(value.v); break;
      case TextEncoding::kInt:
        ok = std::holds_alternative<int64_t>(value.v) ||
             std::holds_alternative<JsonValue::BigInt>(value.v);
        break;
      case TextEncoding::kFloat: ok = std::holds_alternative<double>(value.v); break;
    }
    if (!ok) {
      return CorruptError(where(begin) + ": column '" + key + "' expected " +
                          TextEncodingName(columns_[c].encoding));
    }
  }
  return std::move(parsed).value();
}

}  // namespace sluice

#include "formats/text/jsonl_shard_reader.h"

#include <algorithm>

namespace sluice {

Result<JsonlShardReader> JsonlShardReader::Open(const ShardEntry& entry,
                                                std::string_view data,
                                                std::string_view meta) {
  if (entry.format != "json") {
    return InvalidArgumentError(entry.raw_data.basename + ": format '" + entry.format +
                                "' is not a JSONL shard");
  }
  SLUICE_ASSIGN_OR_RETURN(SplitShardLines lines, SplitShardLines::Declared(entry));
  SLUICE_RETURN_IF_ERROR(lines.Attach(entry, data, meta, /*first_offset=*/0));
  return JsonlShardReader(std::move(lines));
}

Result<JsonValue> JsonlShardReader::Sample(uint32_t i) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view text, lines_.Text(i));
  const uint32_t begin = lines_.offset(i);
  auto where = [&](uint64_t off) { return lines_.Where(i, off); };
  const std::vector<TextColumn>& columns = lines_.columns();
  auto parsed = ParsePyJson(text);
  if (!parsed.ok()) {
    return CorruptError(where(begin) + ": line is not JSON: " + parsed.status().message());
  }
  const auto* obj = std::get_if<JsonValue::Object>(&parsed->v);
  if (obj == nullptr) {
    return CorruptError(where(begin) + ": expected a JSON object");
  }
  if (obj->size() != columns.size()) {
    return CorruptError(where(begin) + ": object has " + std::to_string(obj->size()) +
                        " keys, expected the " + std::to_string(columns.size()) +
                        " declared columns");
  }
  std::vector<bool> seen(columns.size(), false);
  for (const auto& [key, value] : *obj) {
    // Columns are sorted by name (TextColumnsFromEntry checks).
    auto it = std::lower_bound(
        columns.begin(), columns.end(), key,
        [](const TextColumn& col, const std::string& k) { return col.name < k; });
    const size_t c = static_cast<size_t>(it - columns.begin());
    if (it == columns.end() || it->name != key) {
      return CorruptError(where(begin) + ": undeclared key '" + key + "'");
    }
    if (seen[c]) return CorruptError(where(begin) + ": duplicate key '" + key + "'");
    seen[c] = true;
    bool ok = false;
    switch (columns[c].encoding) {
      case TextEncoding::kStr: ok = std::holds_alternative<std::string>(value.v); break;
      case TextEncoding::kInt:
        // A bool too: Mosaic's JSONWriter takes one (a Python bool is an
        // int) and its reader gives it back as written.
        ok = std::holds_alternative<int64_t>(value.v) ||
             std::holds_alternative<JsonValue::BigInt>(value.v) ||
             std::holds_alternative<bool>(value.v);
        break;
      case TextEncoding::kFloat: ok = std::holds_alternative<double>(value.v); break;
    }
    if (!ok) {
      return CorruptError(where(begin) + ": column '" + key + "' expected " +
                          TextEncodingName(columns[c].encoding));
    }
  }
  return std::move(parsed).value();
}

}  // namespace sluice

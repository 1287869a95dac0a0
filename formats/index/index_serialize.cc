// Index -> text, byte-identical to Mosaic's writers: entries are built as
// JsonValue objects and printed by DumpPyJson(sort_keys=true), which is what
// json.dump(..., sort_keys=True) does with them.
#include <string>
#include <string_view>

#include "formats/index/entry_schema.h"
#include "formats/index/index.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

JsonValue Uint(uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return JsonValue{static_cast<int64_t>(v)};
  return JsonValue{JsonValue::BigInt{std::to_string(v)}};
}

JsonValue Str(std::string s) { return JsonValue{std::move(s)}; }

JsonValue StrList(const std::vector<std::string>& items) {
  JsonValue::Array arr;
  arr.reserve(items.size());
  for (const auto& s : items) arr.push_back(Str(s));
  return JsonValue{std::move(arr)};
}

JsonValue NullableStr(const std::optional<std::string>& s) {
  return s ? Str(*s) : JsonValue{nullptr};
}

JsonValue FileInfoValue(const std::optional<FileInfo>& info) {
  if (!info) return JsonValue{nullptr};
  JsonValue::Object hashes;
  for (const auto& [algo, hex] : info->hashes) hashes.emplace_back(algo, Str(hex));
  JsonValue::Object obj;
  obj.emplace_back("basename", Str(info->basename));
  obj.emplace_back("bytes", Uint(info->bytes));
  obj.emplace_back("hashes", JsonValue{std::move(hashes)});
  return JsonValue{std::move(obj)};
}

Status EntryError(const ShardEntry& entry, std::string what) {
  return InvalidArgumentError("shard entry (format '" + entry.format + "'): " + std::move(what));
}

// The writer config: the keys a shard file embeds. `columns` and
// `column_names`/`column_encodings` are two views of the same columns; the
// one the format does not store is derived from the other when empty.
Result<JsonValue::Object> ConfigObject(const ShardEntry& entry) {
  const IndexEntrySchema* schema = FindIndexEntrySchema(entry.format);
  if (schema == nullptr) return EntryError(entry, "unknown format");
  const bool sizes = schema->columns == EntryColumns::kListsWithSizes;
  JsonValue::Object obj;
  // Room for every key of a whole entry (SerializeShardEntry adds three).
  // Reserving it also keeps GCC 12 at -O3 from a false -Warray-bounds inside
  // the first emplace_back into an empty vector.
  obj.reserve(12);
  if (schema->columns == EntryColumns::kObject) {
    JsonValue::Object cols;
    if (!entry.columns.empty()) {
      for (const auto& [name, enc] : entry.columns) cols.emplace_back(name, Str(enc));
    } else {
      if (entry.column_names.size() != entry.column_encodings.size()) {
        return EntryError(entry, "column_names and column_encodings differ in length");
      }
      for (size_t i = 0; i < entry.column_names.size(); ++i) {
        cols.emplace_back(entry.column_names[i], Str(entry.column_encodings[i]));
      }
    }
    obj.emplace_back("columns", JsonValue{std::move(cols)});
  } else {
    std::vector<std::string> names = entry.column_names, encodings = entry.column_encodings;
    if (!sizes && names.empty() && encodings.empty()) {
      for (const auto& [name, enc] : entry.columns) {
        names.push_back(name);
        encodings.push_back(enc);
      }
    }
    if (names.size() != encodings.size()) {
      return EntryError(entry, "column_names and column_encodings differ in length");
    }
    obj.emplace_back("column_encodings", StrList(encodings));
    obj.emplace_back("column_names", StrList(names));
    if (sizes) {
      if (entry.column_sizes.size() != names.size()) {
        return EntryError(entry, "column_sizes and column_names differ in length");
      }
      JsonValue::Array sizes;
      for (const auto& s : entry.column_sizes) sizes.push_back(s ? Uint(*s) : JsonValue{nullptr});
      obj.emplace_back("column_sizes", JsonValue{std::move(sizes)});
    }
  }
  obj.emplace_back("compression", NullableStr(entry.compression));
  obj.emplace_back("format", Str(entry.format));
  obj.emplace_back("hashes", StrList(entry.hashes));
  if (schema->has_meta) {
    if (!entry.newline) return EntryError(entry, "missing newline");
    obj.emplace_back("newline", Str(*entry.newline));
  }
  if (schema->has_separator) {
    if (!entry.separator) return EntryError(entry, "missing separator");
    obj.emplace_back("separator", Str(*entry.separator));
  }
  obj.emplace_back("size_limit", entry.size_limit ? Uint(*entry.size_limit) : JsonValue{nullptr});
  obj.emplace_back("version", JsonValue{int64_t{entry.version}});
  return obj;
}

}  // namespace

Result<std::string> SerializeShardConfig(const ShardEntry& entry) {
  SLUICE_ASSIGN_OR_RETURN(JsonValue::Object obj, ConfigObject(entry));
  return DumpPyJson(JsonValue{std::move(obj)}, /*sort_keys=*/true);
}

Result<std::string> SerializeShardEntry(const ShardEntry& entry) {
  SLUICE_ASSIGN_OR_RETURN(JsonValue::Object obj, ConfigObject(entry));
  obj.emplace_back("samples", Uint(entry.samples));
  obj.emplace_back("raw_data", FileInfoValue(entry.raw_data));
  obj.emplace_back("zip_data", FileInfoValue(entry.zip_data));
  // ConfigObject refused a format without a schema row.
  if (FindIndexEntrySchema(entry.format)->has_meta || entry.has_meta) {
    if (!entry.raw_meta) return EntryError(entry, "missing raw_meta");
    obj.emplace_back("raw_meta", FileInfoValue(entry.raw_meta));
    obj.emplace_back("zip_meta", FileInfoValue(entry.zip_meta));
  }
  return DumpPyJson(JsonValue{std::move(obj)}, /*sort_keys=*/true);
}

Result<std::string> SerializeShardEntries(const Index& index) {
  std::string out = "[";
  for (size_t i = 0; i < index.shards.size(); ++i) {
    if (i) out.append(", ");
    Result<std::string> entry = SerializeShardEntry(index.shards[i]);
    if (!entry.ok()) return entry.status().WithContext("shard " + std::to_string(i));
    out.append(*entry);
  }
  out.push_back(']');
  return out;
}

Result<std::string> SerializeIndexSorted(const Index& index) {
  SLUICE_ASSIGN_OR_RETURN(std::string shards, SerializeShardEntries(index));
  return "{\"shards\": " + shards + ", \"version\": " + std::to_string(index.version) + "}";
}

Result<std::string> SerializeIndexMerged(const Index& index) {
  SLUICE_ASSIGN_OR_RETURN(std::string shards, SerializeShardEntries(index));
  return "{\"version\": " + std::to_string(index.version) + ", \"shards\": " + shards + "}";
}

}  // namespace sluice

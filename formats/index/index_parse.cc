// index.json -> Index, with simdjson's DOM. Every field is checked for
// presence and type before use, because an index may come from anywhere
// (an object store anyone could write to) and its basenames become paths.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "formats/index/entry_schema.h"
#include "formats/index/index.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr size_t kMaxQuoted = 80;  // of untrusted text quoted in errors

std::string Quoted(std::string_view s) {
  std::string out = "'";
  out.append(s.substr(0, kMaxQuoted));
  if (s.size() > kMaxQuoted) out.append("...");
  out.push_back('\'');
  return out;
}

const char* TypeName(element_type t) {
  switch (t) {
    case element_type::ARRAY: return "array";
    case element_type::OBJECT: return "object";
    case element_type::INT64:
    case element_type::UINT64: return "integer";
    case element_type::DOUBLE: return "float";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "bool";
    case element_type::NULL_VALUE: return "null";
  }
  return "unknown";
}

// Copies out of the simdjson_result so range-for never binds to a member of
// a temporary. Callers check the type first.
simdjson::dom::array AsArray(element e) {
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) return {};
  return a;
}
simdjson::dom::object AsObject(element e) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return {};
  return o;
}
std::string_view AsString(element e) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

// Fields of one JSON object by name; duplicates are refused because
// json.loads would silently keep the last one and simdjson the first.
class Fields {
 public:
  // `where` prefixes errors, e.g. "index.json: shard 3"; it must outlive
  // the Fields (the caller's, or the enclosing object's).
  static Result<Fields> Of(element obj, std::string_view where, std::string path_prefix) {
    Fields f;
    f.where_ = where;
    f.prefix_ = std::move(path_prefix);
    f.fields_.reserve(kLinearFields);
    for (auto field : AsObject(obj)) {
      if (f.Find(field.key) != nullptr) {
        return CorruptError(std::string(f.where_) + ": duplicate field '" + f.prefix_ +
                            std::string(field.key) + "'");
      }
      f.fields_.emplace_back(field.key, field.value);
      if (f.by_name_) {
        f.by_name_->emplace(field.key, field.value);
      } else if (f.fields_.size() > kLinearFields) {
        // An object of many keys (not an index's): look them up by hash.
        f.by_name_ = std::make_unique<std::unordered_map<std::string_view, element>>(
            f.fields_.begin(), f.fields_.end());
      }
    }
    return f;
  }

  Status Error(std::string_view name, std::string what) const {
    return CorruptError(std::string(where_) + ": field '" + prefix_ + std::string(name) + "': " +
                        std::move(what));
  }

  Status TypeError(std::string_view name, const char* expected, element e) const {
    return Error(name, std::string("expected ") + expected + ", got " + TypeName(e.type()));
  }

  Result<element> Get(std::string_view name) const {
    const element* e = Find(name);
    if (e == nullptr) return Error(name, "missing");
    return *e;
  }

  bool Has(std::string_view name) const { return Find(name) != nullptr; }

  Result<std::string> String(std::string_view name) const {
    SLUICE_ASSIGN_OR_RETURN(element e, Get(name));
    if (e.type() != element_type::STRING) return TypeError(name, "string", e);
    return std::string(AsString(e));
  }

  Result<std::optional<std::string>> NullableString(std::string_view name) const {
    SLUICE_ASSIGN_OR_RETURN(element e, Get(name));
    if (e.type() == element_type::NULL_VALUE) return std::optional<std::string>();
    if (e.type() != element_type::STRING) return TypeError(name, "string or null", e);
    return std::optional<std::string>(std::string(AsString(e)));
  }

  Result<uint64_t> Uint(std::string_view name, element e, uint64_t max) const {
    uint64_t v;
    if (e.type() == element_type::INT64) {
      const int64_t i = e.get_int64().value_unsafe();
      if (i < 0) return Error(name, "negative value " + std::to_string(i));
      v = static_cast<uint64_t>(i);
    } else if (e.type() == element_type::UINT64) {
      v = e.get_uint64().value_unsafe();
    } else {
      return TypeError(name, "unsigned integer", e);
    }
    if (v > max) {
      return Error(name, "value " + std::to_string(v) + " is larger than the limit " + std::to_string(max));
    }
    return v;
  }

  Result<uint64_t> Uint(std::string_view name, uint64_t max) const {
    SLUICE_ASSIGN_OR_RETURN(element e, Get(name));
    return Uint(name, e, max);
  }

  Result<std::optional<uint64_t>> NullableUint(std::string_view name, uint64_t max) const {
    SLUICE_ASSIGN_OR_RETURN(element e, Get(name));
    if (e.type() == element_type::NULL_VALUE) return std::optional<uint64_t>();
    SLUICE_ASSIGN_OR_RETURN(uint64_t v, Uint(name, e, max));
    return std::optional<uint64_t>(v);
  }

  Result<std::vector<std::string>> StringList(std::string_view name) const {
    SLUICE_ASSIGN_OR_RETURN(element e, Get(name));
    if (e.type() != element_type::ARRAY) return TypeError(name, "array of strings", e);
    std::vector<std::string> out;
    size_t i = 0;
    for (element item : AsArray(e)) {
      if (item.type() != element_type::STRING) {
        return Error(name, "item " + std::to_string(i) + ": expected string, got " + TypeName(item.type()));
      }
      out.emplace_back(AsString(item));
      ++i;
    }
    return out;
  }

  std::string_view where() const { return where_; }
  const std::string& prefix() const { return prefix_; }

 private:
  // An index entry has about a dozen keys: a scan beats a tree there.
  static constexpr size_t kLinearFields = 16;

  const element* Find(std::string_view name) const {
    if (by_name_) {
      auto it = by_name_->find(name);
      return it == by_name_->end() ? nullptr : &it->second;
    }
    for (const auto& [key, value] : fields_) {
      if (key == name) return &value;
    }
    return nullptr;
  }

  std::string_view where_;
  std::string prefix_;
  std::vector<std::pair<std::string_view, element>> fields_;  // in the object's order
  std::unique_ptr<std::unordered_map<std::string_view, element>> by_name_;  // past kLinearFields
};

Result<std::optional<FileInfo>> ParseFileInfo(const Fields& entry, std::string_view name, bool nullable) {
  SLUICE_ASSIGN_OR_RETURN(element e, entry.Get(name));
  if (nullable && e.type() == element_type::NULL_VALUE) return std::optional<FileInfo>();
  if (e.type() != element_type::OBJECT) {
    return entry.TypeError(name, nullable ? "object or null" : "object", e);
  }
  SLUICE_ASSIGN_OR_RETURN(Fields f, Fields::Of(e, entry.where(), entry.prefix() + std::string(name) + "."));
  FileInfo info;
  SLUICE_ASSIGN_OR_RETURN(info.basename, f.String("basename"));
  if (!IsSafeBasename(info.basename)) {
    return f.Error("basename", "unsafe path " + Quoted(info.basename) +
                                   " (must be relative, without '..', '\\' or NUL)");
  }
  SLUICE_ASSIGN_OR_RETURN(info.bytes, f.Uint("bytes", kMaxEntryBytes));
  SLUICE_ASSIGN_OR_RETURN(element hashes, f.Get("hashes"));
  if (hashes.type() != element_type::OBJECT) return f.TypeError("hashes", "object", hashes);
  for (auto h : AsObject(hashes)) {
    if (h.value.type() != element_type::STRING) {
      return f.Error("hashes", "algorithm " + Quoted(h.key) + ": expected string, got " +
                                   TypeName(h.value.type()));
    }
    if (!info.hashes.emplace(std::string(h.key), std::string(AsString(h.value))).second) {
      return f.Error("hashes", "duplicate algorithm " + Quoted(h.key));
    }
  }
  return std::optional<FileInfo>(std::move(info));
}

// A raw (decompressed) size is checked against what its format can hold,
// since it later bounds decompression: "field 'raw_data.bytes': 'a.mds'
// declares 1099511627776 bytes, more than 32-bit offsets address
// (4294967295)".
Status CheckRawSize(const Fields& entry, std::string_view name, const FileInfo& file,
                    uint64_t limit, const std::string& holder) {
  if (file.bytes <= limit) return Status::Ok();
  return entry.Error(std::string(name) + ".bytes",
                     Quoted(file.basename) + " declares " + std::to_string(file.bytes) +
                         " bytes, more than " + holder + " (" + std::to_string(limit) + ")");
}

Status ParseColumnLists(const Fields& f, ShardEntry& entry) {
  SLUICE_ASSIGN_OR_RETURN(entry.column_encodings, f.StringList("column_encodings"));
  SLUICE_ASSIGN_OR_RETURN(entry.column_names, f.StringList("column_names"));
  if (entry.column_names.size() != entry.column_encodings.size()) {
    return f.Error("column_names", std::to_string(entry.column_names.size()) + " names for " +
                                       std::to_string(entry.column_encodings.size()) + " encodings");
  }
  std::vector<std::string> sorted = entry.column_names;
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) return f.Error("column_names", "duplicate column " + Quoted(*dup));
  return Status::Ok();
}

Result<ShardEntry> ParseEntry(element e, const std::string& where) {
  if (e.type() != element_type::OBJECT) {
    return CorruptError(where + ": expected object, got " + TypeName(e.type()));
  }
  SLUICE_ASSIGN_OR_RETURN(Fields f, Fields::Of(e, where, ""));
  ShardEntry entry;
  SLUICE_ASSIGN_OR_RETURN(entry.format, f.String("format"));
  const IndexEntrySchema* schema = FindIndexEntrySchema(entry.format);
  if (schema == nullptr) {
    return UnimplementedError(where + ": field 'format': unknown shard format " +
                              Quoted(entry.format));
  }
  SLUICE_ASSIGN_OR_RETURN(uint64_t version, f.Uint("version", kMaxEntryBytes));
  if (version != 2) {
    return UnimplementedError(where + ": field 'version': unsupported shard version " +
                              std::to_string(version) + " (expected 2)");
  }
  entry.version = 2;

  if (schema->columns == EntryColumns::kListsWithSizes) {
    SLUICE_RETURN_IF_ERROR(ParseColumnLists(f, entry));
    SLUICE_ASSIGN_OR_RETURN(element sizes, f.Get("column_sizes"));
    if (sizes.type() != element_type::ARRAY) return f.TypeError("column_sizes", "array", sizes);
    for (element s : AsArray(sizes)) {
      const std::string item = "column_sizes[" + std::to_string(entry.column_sizes.size()) + "]";
      if (s.type() == element_type::NULL_VALUE) {
        entry.column_sizes.emplace_back();
      } else {
        SLUICE_ASSIGN_OR_RETURN(uint64_t size, f.Uint(item, s, kMaxEntryBytes));
        entry.column_sizes.emplace_back(size);
      }
    }
    if (entry.column_sizes.size() != entry.column_names.size()) {
      return f.Error("column_sizes", std::to_string(entry.column_sizes.size()) + " sizes for " +
                                         std::to_string(entry.column_names.size()) + " columns");
    }
  } else if (schema->columns == EntryColumns::kObject) {
    SLUICE_ASSIGN_OR_RETURN(element cols, f.Get("columns"));
    if (cols.type() != element_type::OBJECT) return f.TypeError("columns", "object", cols);
    for (auto c : AsObject(cols)) {
      if (c.value.type() != element_type::STRING) {
        return f.Error("columns", "column " + Quoted(c.key) + ": expected string, got " +
                                      TypeName(c.value.type()));
      }
      entry.columns.emplace_back(std::string(c.key), std::string(AsString(c.value)));
    }
    std::stable_sort(entry.columns.begin(), entry.columns.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < entry.columns.size(); ++i) {
      if (i && entry.columns[i].first == entry.columns[i - 1].first) {
        return f.Error("columns", "duplicate column " + Quoted(entry.columns[i].first));
      }
      entry.column_names.push_back(entry.columns[i].first);
      entry.column_encodings.push_back(entry.columns[i].second);
    }
  } else {  // EntryColumns::kLists
    SLUICE_RETURN_IF_ERROR(ParseColumnLists(f, entry));
    for (size_t i = 0; i < entry.column_names.size(); ++i) {
      entry.columns.emplace_back(entry.column_names[i], entry.column_encodings[i]);
    }
    std::sort(entry.columns.begin(), entry.columns.end());
  }
  if (schema->has_separator) {
    SLUICE_ASSIGN_OR_RETURN(std::string sep, f.String("separator"));
    if (sep.empty()) return f.Error("separator", "empty");
    entry.separator = std::move(sep);
  }
  if (schema->has_meta) {
    SLUICE_ASSIGN_OR_RETURN(std::string newline, f.String("newline"));
    if (newline.empty()) return f.Error("newline", "empty");
    entry.newline = std::move(newline);
  }

  SLUICE_ASSIGN_OR_RETURN(entry.compression, f.NullableString("compression"));
  SLUICE_ASSIGN_OR_RETURN(entry.hashes, f.StringList("hashes"));
  SLUICE_ASSIGN_OR_RETURN(entry.size_limit, f.NullableUint("size_limit", kMaxEntryBytes));
  SLUICE_ASSIGN_OR_RETURN(entry.samples, f.Uint("samples", kMaxEntrySamples));
  SLUICE_ASSIGN_OR_RETURN(std::optional<FileInfo> raw, ParseFileInfo(f, "raw_data", false));
  entry.raw_data = std::move(*raw);
  SLUICE_RETURN_IF_ERROR(CheckRawSize(f, "raw_data", entry.raw_data, kMaxShardFileBytes,
                                       "32-bit offsets address"));
  SLUICE_ASSIGN_OR_RETURN(entry.zip_data, ParseFileInfo(f, "zip_data", true));
  if (schema->has_meta) {
    entry.has_meta = true;
    SLUICE_ASSIGN_OR_RETURN(entry.raw_meta, ParseFileInfo(f, "raw_meta", false));
    SLUICE_RETURN_IF_ERROR(CheckRawSize(f, "raw_meta", *entry.raw_meta,
                                         MaxSplitMetaBytes(entry.samples),
                                         "the meta file of " + std::to_string(entry.samples) +
                                             " samples holds"));
    SLUICE_ASSIGN_OR_RETURN(entry.zip_meta, ParseFileInfo(f, "zip_meta", true));
  }
  if (entry.compression.has_value() != entry.zip_data.has_value()) {
    return f.Error("zip_data", entry.compression ? "null although 'compression' is set"
                                                 : "present although 'compression' is null");
  }
  return entry;
}

}  // namespace

Status ParseIndexEntries(std::string_view json_text, std::string_view source,
                         const std::function<Status(ShardEntry)>& sink) {
  const std::string src(source);
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json_text);
  element doc;
  if (auto err = parser.parse(padded).get(doc); err) {
    // simdjson gives no position; the Python-dialect parser does.
    Result<JsonValue> located = ParsePyJson(json_text);
    if (!located.ok()) return CorruptError(src + ": malformed JSON: " + located.status().message());
    return CorruptError(src + ": unsupported JSON: " + simdjson::error_message(err));
  }
  if (doc.type() != element_type::OBJECT) {
    return CorruptError(src + ": expected a JSON object at the top, got " + TypeName(doc.type()));
  }
  SLUICE_ASSIGN_OR_RETURN(Fields top, Fields::Of(doc, src, ""));
  SLUICE_ASSIGN_OR_RETURN(uint64_t version, top.Uint("version", kMaxEntryBytes));
  if (version != 2) {
    return UnimplementedError(src + ": field 'version': unsupported index version " +
                              std::to_string(version) + " (expected 2)");
  }
  SLUICE_ASSIGN_OR_RETURN(element shards, top.Get("shards"));
  if (shards.type() != element_type::ARRAY) return top.TypeError("shards", "array", shards);
  size_t n = 0;
  for (element e : AsArray(shards)) {
    SLUICE_ASSIGN_OR_RETURN(ShardEntry entry, ParseEntry(e, src + ": shard " + std::to_string(n)));
    ++n;
    SLUICE_RETURN_IF_ERROR(sink(std::move(entry)));
  }
  return Status::Ok();
}

Result<Index> ParseIndex(std::string_view json_text, std::string_view source) {
  Index index;
  SLUICE_RETURN_IF_ERROR(ParseIndexEntries(json_text, source, [&index](ShardEntry e) {
    index.shards.push_back(std::move(e));
    return Status::Ok();
  }));
  return index;
}

}  // namespace sluice

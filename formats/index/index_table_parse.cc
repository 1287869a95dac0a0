// index.json straight into a ShardTable (ShardTable::FromIndexJson) with
// simdjson's On-Demand API: no DOM, no ShardEntry per shard. Names and
// texts are views into the JSON text (or, for a string with escapes, into
// the parser's buffer), copied once into the table's text pool.
//
// This path only accepts: it words no error. Anything it does not expect
// (an error of any kind, a key it does not know, a key with escapes, a
// duplicate) makes it hand the whole text to ParseIndexEntries, the one
// owner of index.json's rules and error texts, which then either words the
// error or accepts what this path left to it. So this path must never
// accept what ParseIndexEntries refuses, and must build the very table
// ParseIndexEntries + Builder::Add would (tests/formats/index/
// index_table_parse_test.cc holds it to both on every fixture and on bad
// inputs).
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "formats/index/entry_schema.h"
#include "formats/index/index.h"
#include "formats/index/index_table_parse.h"
#include "formats/index/shard_table.h"

namespace sluice {
namespace {

namespace od = simdjson::ondemand;
using HashView = std::pair<std::string_view, std::string_view>;

static_assert(kIndexJsonPadding >= simdjson::SIMDJSON_PADDING);

// Every check below returns false for "not this path's case".
#define SLUICE_TABLE_TRY(cond) \
  do {                         \
    if (!(cond)) return false; \
  } while (0)

// The keys of an entry this path reads; any other key is left to
// ParseIndexEntries (it ignores it, after checking it is valid JSON).
enum EntryKey : int {
  kColumnEncodings, kColumnNames, kColumnSizes, kColumns, kCompression, kFormat, kHashes,
  kNewline, kRawData, kRawMeta, kSamples, kSeparator, kSizeLimit, kVersion, kZipData, kZipMeta,
  kNumEntryKeys
};
constexpr std::string_view kEntryKeyNames[kNumEntryKeys] = {
    "column_encodings", "column_names", "column_sizes", "columns", "compression", "format",
    "hashes", "newline", "raw_data", "raw_meta", "samples", "separator", "size_limit", "version",
    "zip_data", "zip_meta"};

// A key's text when it has no escapes (a key with escapes may spell a known
// key: left to ParseIndexEntries).
bool PlainKey(od::field& field, std::string_view* key) {
  const char* p = field.key().raw();
  const char* q = p;
  while (*q != '"') {
    if (*q == '\\') return false;
    ++q;
  }
  *key = std::string_view(p, static_cast<size_t>(q - p));
  return true;
}

// True when the key at `field` is exactly `name` (a name with no quote or
// backslash): its raw text is `name` and its closing quote. Reads at most
// name.size() + 1 bytes from the key's start, which the padded text
// holds (a key is followed by at least a colon and a value); a key of
// another spelling of `name` (escapes) is not it, and goes on to
// PlainKey's refusal or ParseIndexEntries.
bool IsKey(od::field& field, std::string_view name) {
  const char* p = field.key().raw();
  return p[0] == name[0] && std::memcmp(p, name.data(), name.size()) == 0 &&
         p[name.size()] == '"';
}

bool Trimmed(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A value's token (its JSON text), without the whitespace after it. A
// value read by its token is not consumed: the object or array it is in
// skips it when it moves on.
std::string_view Token(od::value v) {
  std::string_view token = v.raw_json_token();
  while (!token.empty() && Trimmed(token.back())) token.remove_suffix(1);
  return token;
}

// A string value: a view into the JSON text when it has no escapes (nothing
// to unescape or check: simdjson's first stage validated its bytes), else
// the unescaped text in the parser's buffer. Both live as long as the
// parse.
bool StringValue(od::value v, std::string_view* out) {
  const std::string_view token = Token(v);
  SLUICE_TABLE_TRY(token.size() >= 2 && token.front() == '"' && token.back() == '"');
  const std::string_view inner = token.substr(1, token.size() - 2);
  if (inner.find('\\') == std::string_view::npos) {
    *out = inner;
    return true;
  }
  return v.get_string().get(*out) == simdjson::SUCCESS;
}

// An unsigned integer no larger than `max` (JSON integers only, as
// ParseIndexEntries takes them), read from its token: 1 to 19 digits, no
// leading zero (so no overflow). Other spellings ("-0", 20 digits) are
// left to ParseIndexEntries.
bool UintValue(od::value v, uint64_t max, uint64_t* out) {
  const std::string_view t = Token(v);
  SLUICE_TABLE_TRY(!t.empty() && t.size() <= 19 && (t[0] != '0' || t.size() == 1));
  uint64_t n = 0;
  for (char c : t) {
    SLUICE_TABLE_TRY(c >= '0' && c <= '9');
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return n <= max;
}

bool IsNull(od::value v, bool* null) {
  od::json_type t;
  SLUICE_TABLE_TRY(v.type().get(t) == simdjson::SUCCESS);
  *null = t == od::json_type::null;
  if (!*null) return true;
  bool is_null = false;  // type() looked at the first byte only
  return v.is_null().get(is_null) == simdjson::SUCCESS && is_null;
}

bool StringList(od::value v, std::vector<std::string_view>* out) {
  out->clear();
  od::array a;
  SLUICE_TABLE_TRY(v.get_array().get(a) == simdjson::SUCCESS);
  for (auto item : a) {
    od::value e;
    SLUICE_TABLE_TRY(std::move(item).get(e) == simdjson::SUCCESS);
    std::string_view s;
    SLUICE_TABLE_TRY(StringValue(e, &s));
    out->push_back(s);
  }
  return true;
}

// The name -> text pairs of an object of strings ("columns", a file's
// "hashes"), in the object's order.
bool StringObject(od::value v, std::vector<HashView>* out) {
  out->clear();
  od::object o;
  SLUICE_TABLE_TRY(v.get_object().get(o) == simdjson::SUCCESS);
  for (auto f : o) {
    od::field field;
    SLUICE_TABLE_TRY(std::move(f).get(field) == simdjson::SUCCESS);
    std::string_view key, value;
    SLUICE_TABLE_TRY(PlainKey(field, &key));
    SLUICE_TABLE_TRY(StringValue(field.value(), &value));
    out->emplace_back(key, value);
  }
  return true;
}

// True when sorted `names` has no name twice.
template <typename T, typename Name>
bool NoDuplicates(std::vector<T>& items, Name name) {
  for (size_t i = 1; i < items.size(); ++i) {
    if (name(items[i]) == name(items[i - 1])) return false;
  }
  return true;
}

struct FileScratch {
  bool present = false;  // an object (not null)
  std::string_view basename;
  uint64_t bytes = 0;
  std::vector<HashView> hashes;  // sorted by algorithm

  FileParts parts() const { return FileParts{basename, bytes, hashes}; }
};

// {"basename", "bytes", "hashes"} and nothing else, or null where
// `nullable`.
bool FileValue(od::value v, bool nullable, FileScratch* out) {
  bool null = false;
  SLUICE_TABLE_TRY(IsNull(v, &null));
  out->present = !null;
  if (null) return nullable;
  od::object o;
  SLUICE_TABLE_TRY(v.get_object().get(o) == simdjson::SUCCESS);
  bool basename = false, bytes = false, hashes = false;
  for (auto f : o) {
    od::field field;
    SLUICE_TABLE_TRY(std::move(f).get(field) == simdjson::SUCCESS);
    if (!basename && IsKey(field, "basename")) {
      SLUICE_TABLE_TRY(StringValue(field.value(), &out->basename));
      SLUICE_TABLE_TRY(IsSafeBasename(out->basename));
      basename = true;
    } else if (!bytes && IsKey(field, "bytes")) {
      SLUICE_TABLE_TRY(UintValue(field.value(), kMaxEntryBytes, &out->bytes));
      bytes = true;
    } else if (!hashes && IsKey(field, "hashes")) {
      SLUICE_TABLE_TRY(StringObject(field.value(), &out->hashes));
      std::sort(out->hashes.begin(), out->hashes.end());
      SLUICE_TABLE_TRY(NoDuplicates(out->hashes, [](const HashView& h) { return h.first; }));
      hashes = true;
    } else {
      return false;
    }
  }
  return basename && bytes && hashes;
}

// One entry's values as read, before its format's schema says which count.
struct EntryScratch {
  uint32_t seen = 0;  // bit per EntryKey
  std::string_view format;
  uint64_t version = 0;
  std::vector<std::string_view> column_encodings, column_names;
  std::vector<std::optional<uint64_t>> column_sizes;
  std::vector<HashView> columns;
  bool compression_null = true;
  std::string_view compression;
  std::vector<std::string_view> hashes;
  std::string_view newline, separator;
  bool size_limit_null = true;
  uint64_t size_limit = 0;
  uint64_t samples = 0;
  FileScratch raw_data, zip_data, raw_meta, zip_meta;
  std::vector<std::string_view> sorted_names;  // scratch of the duplicate check
  ShardEntry config;  // the configuration, capacity reused from shard to shard
};

bool ReadEntryValue(EntryKey key, od::value v, EntryScratch& s) {
  switch (key) {
    case kColumnEncodings: return StringList(v, &s.column_encodings);
    case kColumnNames: return StringList(v, &s.column_names);
    case kColumnSizes: {
      s.column_sizes.clear();
      od::array a;
      SLUICE_TABLE_TRY(v.get_array().get(a) == simdjson::SUCCESS);
      for (auto item : a) {
        od::value e;
        SLUICE_TABLE_TRY(std::move(item).get(e) == simdjson::SUCCESS);
        bool null = false;
        SLUICE_TABLE_TRY(IsNull(e, &null));
        uint64_t size = 0;
        if (!null) SLUICE_TABLE_TRY(UintValue(e, kMaxEntryBytes, &size));
        s.column_sizes.push_back(null ? std::nullopt : std::optional<uint64_t>(size));
      }
      return true;
    }
    case kColumns: return StringObject(v, &s.columns);
    case kCompression:
      SLUICE_TABLE_TRY(IsNull(v, &s.compression_null));
      return s.compression_null || StringValue(v, &s.compression);
    case kFormat: return StringValue(v, &s.format);
    case kHashes: return StringList(v, &s.hashes);
    case kNewline: return StringValue(v, &s.newline);
    case kRawData: return FileValue(v, false, &s.raw_data);
    case kRawMeta: return FileValue(v, false, &s.raw_meta);
    case kSamples: return UintValue(v, kMaxEntrySamples, &s.samples);
    case kSeparator: return StringValue(v, &s.separator);
    case kSizeLimit:
      SLUICE_TABLE_TRY(IsNull(v, &s.size_limit_null));
      return s.size_limit_null || UintValue(v, kMaxEntryBytes, &s.size_limit);
    case kVersion: return UintValue(v, kMaxEntryBytes, &s.version);
    case kZipData: return FileValue(v, true, &s.zip_data);
    case kZipMeta: return FileValue(v, true, &s.zip_meta);
    case kNumEntryKeys: break;
  }
  return false;
}

void AssignStrings(const std::vector<std::string_view>& from, std::vector<std::string>* to) {
  to->resize(from.size());
  for (size_t i = 0; i < from.size(); ++i) (*to)[i].assign(from[i]);
}

void AssignOptional(bool present, std::string_view from, std::optional<std::string>* to) {
  if (!present) {
    to->reset();
  } else if (*to) {
    (*to)->assign(from);
  } else {
    to->emplace(from);
  }
}

// The EntryKey `field` names into *key, looked for from *key on: writers
// sort an entry's keys (Mosaic's json.dumps(sort_keys=True)) as
// kEntryKeyNames is sorted, so the key after the last one found is
// nearly always the next to compare, or a few further.
bool FindEntryKey(od::field& field, int* key) {
  for (int n = 0; n < kNumEntryKeys; ++n) {
    const int k = (*key + n) % kNumEntryKeys;
    if (IsKey(field, kEntryKeyNames[k])) {
      *key = k;  // the caller's next search starts after it
      return true;
    }
  }
  return false;
}

bool Has(const EntryScratch& s, EntryKey k) { return (s.seen >> k) & 1; }

// The entry's configuration into s.config, as ParseIndexEntries sets it for
// its format, and its own rules checked.
bool EntryConfig(EntryScratch& s, const IndexEntrySchema& schema) {
  ShardEntry& c = s.config;
  c.format.assign(s.format);
  c.version = 2;
  auto sorted_names_unique = [&s] {
    s.sorted_names.assign(s.column_names.begin(), s.column_names.end());
    std::sort(s.sorted_names.begin(), s.sorted_names.end());
    return std::adjacent_find(s.sorted_names.begin(), s.sorted_names.end()) == s.sorted_names.end();
  };
  if (schema.columns == EntryColumns::kObject) {
    SLUICE_TABLE_TRY(Has(s, kColumns));
    std::stable_sort(s.columns.begin(), s.columns.end(),
                     [](const HashView& a, const HashView& b) { return a.first < b.first; });
    SLUICE_TABLE_TRY(NoDuplicates(s.columns, [](const HashView& h) { return h.first; }));
    c.columns.resize(s.columns.size());
    c.column_names.resize(s.columns.size());
    c.column_encodings.resize(s.columns.size());
    for (size_t i = 0; i < s.columns.size(); ++i) {
      c.columns[i].first.assign(s.columns[i].first);
      c.columns[i].second.assign(s.columns[i].second);
      c.column_names[i].assign(s.columns[i].first);
      c.column_encodings[i].assign(s.columns[i].second);
    }
    c.column_sizes.clear();
  } else {
    SLUICE_TABLE_TRY(Has(s, kColumnEncodings) && Has(s, kColumnNames));
    SLUICE_TABLE_TRY(s.column_names.size() == s.column_encodings.size());
    AssignStrings(s.column_names, &c.column_names);
    AssignStrings(s.column_encodings, &c.column_encodings);
    if (c.column_names.size() > 1) SLUICE_TABLE_TRY(sorted_names_unique());
    if (schema.columns == EntryColumns::kListsWithSizes) {
      SLUICE_TABLE_TRY(Has(s, kColumnSizes) && s.column_sizes.size() == s.column_names.size());
      c.column_sizes = s.column_sizes;
      c.columns.clear();
    } else {
      c.column_sizes.clear();
      c.columns.resize(s.column_names.size());
      for (size_t i = 0; i < s.column_names.size(); ++i) {
        c.columns[i].first.assign(s.column_names[i]);
        c.columns[i].second.assign(s.column_encodings[i]);
      }
      std::sort(c.columns.begin(), c.columns.end());
    }
  }
  if (schema.has_separator) SLUICE_TABLE_TRY(Has(s, kSeparator) && !s.separator.empty());
  AssignOptional(schema.has_separator, s.separator, &c.separator);
  if (schema.has_meta) SLUICE_TABLE_TRY(Has(s, kNewline) && !s.newline.empty());
  AssignOptional(schema.has_meta, s.newline, &c.newline);
  SLUICE_TABLE_TRY(Has(s, kCompression) && Has(s, kHashes) && Has(s, kSizeLimit));
  AssignOptional(!s.compression_null, s.compression, &c.compression);
  AssignStrings(s.hashes, &c.hashes);
  c.size_limit = s.size_limit_null ? std::nullopt : std::optional<uint64_t>(s.size_limit);
  return true;
}

class TableParser {
 public:
  bool Entry(od::value v) {
    EntryScratch& s = scratch_;
    s.seen = 0;
    int next = 0;
    od::object o;
    SLUICE_TABLE_TRY(v.get_object().get(o) == simdjson::SUCCESS);
    for (auto f : o) {
      od::field field;
      SLUICE_TABLE_TRY(std::move(f).get(field) == simdjson::SUCCESS);
      SLUICE_TABLE_TRY(FindEntryKey(field, &next));
      const auto key = static_cast<EntryKey>(next);
      next = (next + 1) % kNumEntryKeys;
      SLUICE_TABLE_TRY(!Has(s, key));
      s.seen |= uint32_t{1} << key;
      SLUICE_TABLE_TRY(ReadEntryValue(key, field.value(), s));
    }
    SLUICE_TABLE_TRY(Has(s, kFormat) && Has(s, kVersion) && s.version == 2);
    const IndexEntrySchema* schema = FindIndexEntrySchema(s.format);
    SLUICE_TABLE_TRY(schema != nullptr && EntryConfig(s, *schema));
    SLUICE_TABLE_TRY(Has(s, kSamples) && Has(s, kRawData) && Has(s, kZipData));
    SLUICE_TABLE_TRY(s.raw_data.bytes <= kMaxShardFileBytes);
    ShardParts parts;
    parts.samples = s.samples;
    parts.raw_data = s.raw_data.parts();
    if (s.zip_data.present) parts.zip_data = s.zip_data.parts();
    if (schema->has_meta) {
      SLUICE_TABLE_TRY(Has(s, kRawMeta) && Has(s, kZipMeta));
      SLUICE_TABLE_TRY(s.raw_meta.bytes <= MaxSplitMetaBytes(s.samples));
      parts.has_meta = true;
      parts.raw_meta = s.raw_meta.parts();
      if (s.zip_meta.present) parts.zip_meta = s.zip_meta.parts();
    }
    SLUICE_TABLE_TRY(s.compression_null != s.zip_data.present);
    return builder_.Add(s.config, parts).ok();
  }

  // The top-level object: "shards" and "version" 2, nothing else.
  bool Document(od::document& doc) {
    od::object top;
    SLUICE_TABLE_TRY(doc.get_object().get(top) == simdjson::SUCCESS);
    bool shards = false, version = false;
    for (auto f : top) {
      od::field field;
      SLUICE_TABLE_TRY(std::move(f).get(field) == simdjson::SUCCESS);
      std::string_view name;
      SLUICE_TABLE_TRY(PlainKey(field, &name));
      if (name == "shards" && !shards) {
        shards = true;
        od::array a;
        SLUICE_TABLE_TRY(field.value().get_array().get(a) == simdjson::SUCCESS);
        for (auto item : a) {
          od::value e;
          SLUICE_TABLE_TRY(std::move(item).get(e) == simdjson::SUCCESS);
          SLUICE_TABLE_TRY(Entry(e));
        }
      } else if (name == "version" && !version) {
        version = true;
        uint64_t v = 0;
        SLUICE_TABLE_TRY(UintValue(field.value(), kMaxEntryBytes, &v) && v == 2);
      } else {
        return false;
      }
    }
    // Nothing after the object (its end is the end of the document).
    return shards && version && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  }

  ShardTable::Builder& builder() { return builder_; }

 private:
  EntryScratch scratch_;
  ShardTable::Builder builder_;
};

#undef SLUICE_TABLE_TRY

}  // namespace

std::optional<ShardTable> ParseIndexTableFast(std::string_view json_text, size_t readable_bytes) {
  if (readable_bytes < json_text.size() + simdjson::SIMDJSON_PADDING) return std::nullopt;
  od::parser parser;
  od::document doc;
  TableParser table;
  // The table's sizes from the text's, roughly: an entry's JSON is over
  // 128 bytes (its required keys alone), it names at most 4 files, and
  // the names and hash texts are copied from it.
  table.builder().Reserve(json_text.size() / 128, json_text.size() / 64, json_text.size());
  const simdjson::padded_string_view padded(json_text.data(), json_text.size(), readable_bytes);
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || !table.Document(doc)) {
    return std::nullopt;
  }
  return std::move(table.builder()).Finish();
}

Result<ShardTable> ShardTable::FromIndexJson(std::string_view json_text, std::string_view source,
                                             size_t readable_bytes) {
  std::optional<ShardTable> fast;
  if (readable_bytes >= json_text.size() + kIndexJsonPadding) {
    fast = ParseIndexTableFast(json_text, readable_bytes);
  } else {
    const simdjson::padded_string padded(json_text);
    fast = ParseIndexTableFast(padded, padded.size() + simdjson::SIMDJSON_PADDING);
  }
  if (fast) return std::move(*fast);
  // Not a case the fast path takes: the checking parser words the error or
  // builds the table.
  Builder builder;
  SLUICE_RETURN_IF_ERROR(ParseIndexEntries(json_text, source, [&builder](ShardEntry e) {
    return builder.Add(std::move(e));
  }));
  return std::move(builder).Finish();
}

}  // namespace sluice

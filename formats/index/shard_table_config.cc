#include "formats/index/shard_table_config.h"

#include <cstring>

namespace sluice {
namespace {

void PutU32(uint32_t v, std::string* out) {
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}

void PutU64(uint64_t v, std::string* out) {
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}

void PutString(std::string_view s, std::string* out) {
  PutU32(static_cast<uint32_t>(s.size()), out);
  out->append(s);
}

void PutOptString(const std::optional<std::string>& s, std::string* out) {
  out->push_back(s ? 1 : 0);
  if (s) PutString(*s, out);
}

void PutStrings(const std::vector<std::string>& v, std::string* out) {
  PutU32(static_cast<uint32_t>(v.size()), out);
  for (const std::string& s : v) PutString(s, out);
}

// Reads from the front of a byte string, refusing to run past its end.
class Reader {
 public:
  Reader(std::string_view* in, std::string_view source) : in_(in), source_(source) {}

  Result<uint8_t> U8() {
    SLUICE_RETURN_IF_ERROR(Need(1, "a flag"));
    uint8_t v = static_cast<uint8_t>((*in_)[0]);
    in_->remove_prefix(1);
    if (v > 1) return Corrupt("a flag of " + std::to_string(v));
    return v;
  }
  Result<uint32_t> U32(const char* what) {
    SLUICE_RETURN_IF_ERROR(Need(4, what));
    uint32_t v;
    std::memcpy(&v, in_->data(), 4);
    in_->remove_prefix(4);
    return v;
  }
  Result<uint64_t> U64(const char* what) {
    SLUICE_RETURN_IF_ERROR(Need(8, what));
    uint64_t v;
    std::memcpy(&v, in_->data(), 8);
    in_->remove_prefix(8);
    return v;
  }
  Result<std::string> String(const char* what) {
    SLUICE_ASSIGN_OR_RETURN(uint32_t n, U32(what));
    SLUICE_RETURN_IF_ERROR(Need(n, what));
    std::string s(in_->substr(0, n));
    in_->remove_prefix(n);
    return s;
  }
  Result<std::optional<std::string>> OptString(const char* what) {
    SLUICE_ASSIGN_OR_RETURN(uint8_t present, U8());
    if (!present) return std::optional<std::string>();
    SLUICE_ASSIGN_OR_RETURN(std::string s, String(what));
    return std::optional<std::string>(std::move(s));
  }
  // A count of items of at least `min_item_bytes` each: no more than the
  // bytes left could hold, so nothing is sized by a corrupt count.
  Result<uint32_t> Count(const char* what, size_t min_item_bytes) {
    SLUICE_ASSIGN_OR_RETURN(uint32_t n, U32(what));
    if (uint64_t{n} * min_item_bytes > in_->size()) {
      return Corrupt(std::string(what) + ": " + std::to_string(n) + " items in " +
                     std::to_string(in_->size()) + " bytes");
    }
    return n;
  }
  Result<std::vector<std::string>> Strings(const char* what) {
    SLUICE_ASSIGN_OR_RETURN(uint32_t n, Count(what, 4));
    std::vector<std::string> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      SLUICE_ASSIGN_OR_RETURN(std::string s, String(what));
      v.push_back(std::move(s));
    }
    return v;
  }

 private:
  Status Need(uint64_t n, const char* what) {
    if (n > in_->size()) return Corrupt(std::string(what) + " ends early");
    return Status::Ok();
  }
  Status Corrupt(const std::string& what) const {
    return CorruptError(std::string(source_) + ": shard configuration: " + what);
  }

  std::string_view* in_;
  std::string_view source_;
};

}  // namespace

void EncodeShardConfig(const ShardEntry& e, std::string* out) {
  PutString(e.format, out);
  PutU32(static_cast<uint32_t>(e.version), out);
  PutStrings(e.column_names, out);
  PutStrings(e.column_encodings, out);
  PutU32(static_cast<uint32_t>(e.column_sizes.size()), out);
  for (const std::optional<uint64_t>& size : e.column_sizes) {
    out->push_back(size ? 1 : 0);
    if (size) PutU64(*size, out);
  }
  PutU32(static_cast<uint32_t>(e.columns.size()), out);
  for (const auto& [name, encoding] : e.columns) {
    PutString(name, out);
    PutString(encoding, out);
  }
  PutOptString(e.compression, out);
  PutStrings(e.hashes, out);
  PutOptString(e.newline, out);
  PutOptString(e.separator, out);
  out->push_back(e.size_limit ? 1 : 0);
  if (e.size_limit) PutU64(*e.size_limit, out);
}

Result<ShardEntry> DecodeShardConfig(std::string_view* in, std::string_view source) {
  Reader r(in, source);
  ShardEntry e;
  SLUICE_ASSIGN_OR_RETURN(e.format, r.String("format"));
  SLUICE_ASSIGN_OR_RETURN(uint32_t version, r.U32("version"));
  e.version = static_cast<int>(version);
  SLUICE_ASSIGN_OR_RETURN(e.column_names, r.Strings("column_names"));
  SLUICE_ASSIGN_OR_RETURN(e.column_encodings, r.Strings("column_encodings"));
  SLUICE_ASSIGN_OR_RETURN(uint32_t sizes, r.Count("column_sizes", 1));
  for (uint32_t i = 0; i < sizes; ++i) {
    SLUICE_ASSIGN_OR_RETURN(uint8_t present, r.U8());
    std::optional<uint64_t> size;
    if (present) {
      SLUICE_ASSIGN_OR_RETURN(size, r.U64("column_sizes"));
    }
    e.column_sizes.push_back(size);
  }
  SLUICE_ASSIGN_OR_RETURN(uint32_t columns, r.Count("columns", 8));
  for (uint32_t i = 0; i < columns; ++i) {
    SLUICE_ASSIGN_OR_RETURN(std::string name, r.String("columns"));
    SLUICE_ASSIGN_OR_RETURN(std::string encoding, r.String("columns"));
    e.columns.emplace_back(std::move(name), std::move(encoding));
  }
  SLUICE_ASSIGN_OR_RETURN(e.compression, r.OptString("compression"));
  SLUICE_ASSIGN_OR_RETURN(e.hashes, r.Strings("hashes"));
  SLUICE_ASSIGN_OR_RETURN(e.newline, r.OptString("newline"));
  SLUICE_ASSIGN_OR_RETURN(e.separator, r.OptString("separator"));
  SLUICE_ASSIGN_OR_RETURN(uint8_t has_limit, r.U8());
  if (has_limit) {
    SLUICE_ASSIGN_OR_RETURN(e.size_limit, r.U64("size_limit"));
  }
  return e;
}

}  // namespace sluice

#include "engine/packing/pack_spec.h"

#include <variant>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

Status Bad(std::string_view key, std::string_view what) {
  return InvalidArgumentError("pack spec: '" + std::string(key) + "' " + std::string(what));
}

// An int member, or nullopt for null (when `nullable`).
Status ReadInt(const JsonValue& v, std::string_view key, bool nullable, int64_t* out) {
  if (nullable && std::holds_alternative<std::nullptr_t>(v.v)) {
    *out = -1;
    return Status::Ok();
  }
  const int64_t* i = std::get_if<int64_t>(&v.v);
  if (i == nullptr) return Bad(key, nullable ? "must be an integer or null" : "must be an integer");
  if (*i < 0) return Bad(key, "must not be negative, got " + std::to_string(*i));
  *out = *i;
  return Status::Ok();
}

}  // namespace

Result<PackSpec> ParsePackSpec(std::string_view json) {
  SLUICE_ASSIGN_OR_RETURN(JsonValue root, ParsePyJson(json));
  const auto* members = std::get_if<JsonValue::Object>(&root.v);
  if (members == nullptr) return InvalidArgumentError("pack spec: must be a JSON object");
  PackSpec spec;
  bool has_column = false, has_seq_len = false;
  for (const auto& [key, value] : *members) {
    if (key == "column") {
      const auto* s = std::get_if<std::string>(&value.v);
      if (s == nullptr || s->empty()) return Bad(key, "must be a non-empty string");
      spec.column = *s;
      has_column = true;
    } else if (key == "seq_len") {
      int64_t n = 0;
      SLUICE_RETURN_IF_ERROR(ReadInt(value, key, false, &n));
      if (n == 0 || static_cast<uint64_t>(n) > kMaxSeqLen) {
        return Bad(key, "must be in 1.." + std::to_string(kMaxSeqLen) + ", got " +
                            std::to_string(n));
      }
      spec.seq_len = static_cast<uint64_t>(n);
      has_seq_len = true;
    } else if (key == "eos_id") {
      SLUICE_RETURN_IF_ERROR(ReadInt(value, key, true, &spec.eos_id));
    } else if (key == "pad_id") {
      SLUICE_RETURN_IF_ERROR(ReadInt(value, key, true, &spec.pad_id));
    } else if (key == "method") {
      const auto* s = std::get_if<std::string>(&value.v);
      if (s != nullptr && *s == "concat") {
        spec.method = PackMethod::kConcat;
      } else if (s != nullptr && *s == "bin") {
        spec.method = PackMethod::kBin;
      } else {
        return Bad(key, "must be 'concat' or 'bin'");
      }
    } else if (key == "bin_window") {
      int64_t n = 0;
      SLUICE_RETURN_IF_ERROR(ReadInt(value, key, false, &n));
      if (n == 0 || n > (int64_t{1} << 20)) return Bad(key, "must be in 1..1048576");
      spec.bin_window = static_cast<uint64_t>(n);
    } else if (key == "bytes_dtype") {
      const auto* s = std::get_if<std::string>(&value.v);
      if (s == nullptr || (*s != "int16" && *s != "int32" && *s != "int64" && *s != "uint16" &&
                           *s != "uint32" && *s != "uint64")) {
        return Bad(key, "must be one of int16, int32, int64, uint16, uint32, uint64");
      }
      spec.bytes_dtype = *s;
    } else if (key == "drop_last") {
      const auto* b = std::get_if<bool>(&value.v);
      if (b == nullptr) return Bad(key, "must be true or false");
      spec.drop_last = *b;
    } else {
      return Bad(key, "is not a pack spec key (column, seq_len, eos_id, pad_id, method, "
                      "bin_window, bytes_dtype, drop_last)");
    }
  }
  if (!has_column) return Bad("column", "is required");
  if (!has_seq_len) return Bad("seq_len", "is required");
  return spec;
}

}  // namespace sluice

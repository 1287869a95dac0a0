#include "formats/parquet/field_encoding.h"

#include <cstring>

#include "base/bytes.h"
#include "formats/mds/float16.h"

namespace sluice::parquet {
namespace {

using K = LogicalType::Kind;

enum class Num { kNone, kSigned, kUnsigned, kFloat, kBool };

// A fixed-width scalar encoding: how its bytes read as a number.
struct Scalar {
  Num num = Num::kNone;
  size_t width = 0;
};

Scalar ScalarOf(std::string_view name) {
  static constexpr struct {
    std::string_view name;
    Num num;
    size_t width;
  } kTable[] = {
      {"int8", Num::kSigned, 1},     {"int16", Num::kSigned, 2},     {"int32", Num::kSigned, 4},
      {"int64", Num::kSigned, 8},    {"uint8", Num::kUnsigned, 1},   {"uint16", Num::kUnsigned, 2},
      {"uint32", Num::kUnsigned, 4}, {"uint64", Num::kUnsigned, 8},  {"float16", Num::kFloat, 2},
      {"float32", Num::kFloat, 4},   {"float64", Num::kFloat, 8},    {"bool", Num::kBool, 1},
      {"date32", Num::kSigned, 4},   {"time32[ms]", Num::kSigned, 4},
  };
  for (const auto& s : kTable) {
    if (s.name == name) return {s.num, s.width};
  }
  if (name.starts_with("timestamp[") || name.starts_with("time64[")) return {Num::kSigned, 8};
  return {};
}

std::string UnitName(TimeUnit u) {
  return u == TimeUnit::kMillis ? "ms" : u == TimeUnit::kMicros ? "us" : "ns";
}

bool IsDecimal(const LeafColumn& l) {
  return l.logical_type.kind == K::kDecimal || l.converted_type == ConvertedType::kDecimal;
}

bool IsText(const LeafColumn& l) {
  const K k = l.logical_type.kind;
  return k == K::kString || k == K::kEnum || k == K::kJson ||
         l.converted_type == ConvertedType::kUtf8 || l.converted_type == ConvertedType::kEnum ||
         l.converted_type == ConvertedType::kJson;
}

// INT32/INT64 integer annotations: (bits, signed), or bits 0 for none.
std::pair<int, bool> IntegerOf(const LeafColumn& l) {
  if (l.logical_type.kind == K::kInteger) return {l.logical_type.bit_width, l.logical_type.is_signed};
  if (!l.converted_type) return {0, true};
  switch (*l.converted_type) {
    case ConvertedType::kInt8: return {8, true};
    case ConvertedType::kInt16: return {16, true};
    case ConvertedType::kInt32: return {32, true};
    case ConvertedType::kInt64: return {64, true};
    case ConvertedType::kUint8: return {8, false};
    case ConvertedType::kUint16: return {16, false};
    case ConvertedType::kUint32: return {32, false};
    case ConvertedType::kUint64: return {64, false};
    default: return {0, true};
  }
}

// The leaf value's encoding, as a scalar field.
FieldEncoding LeafEncoding(const LeafColumn& l) {
  const auto fixed = [](std::string name, size_t width) {
    return FieldEncoding{std::move(name), FieldBytes::kFixed, width};
  };
  if (IsDecimal(l)) {
    return {"decimal(" + std::to_string(l.precision) + "," + std::to_string(l.scale) + ")",
            FieldBytes::kDecimalText, 0};
  }
  const LogicalType& t = l.logical_type;
  switch (l.physical_type) {
    case PhysicalType::kBoolean:
      return fixed("bool", 1);
    case PhysicalType::kInt32: {
      if (t.kind == K::kDate || l.converted_type == ConvertedType::kDate) return fixed("date32", 4);
      if (t.kind == K::kTime || l.converted_type == ConvertedType::kTimeMillis) {
        return fixed("time32[ms]", 4);
      }
      auto [bits, is_signed] = IntegerOf(l);
      if (bits == 0 || bits > 32) bits = 32;
      return fixed((is_signed ? "int" : "uint") + std::to_string(bits), static_cast<size_t>(bits / 8));
    }
    case PhysicalType::kInt64: {
      if (t.kind == K::kTimestamp) {
        return fixed("timestamp[" + UnitName(t.unit) + (t.adjusted_to_utc ? ",UTC]" : "]"), 8);
      }
      if (l.converted_type == ConvertedType::kTimestampMillis) return fixed("timestamp[ms,UTC]", 8);
      if (l.converted_type == ConvertedType::kTimestampMicros) return fixed("timestamp[us,UTC]", 8);
      if (t.kind == K::kTime) return fixed("time64[" + UnitName(t.unit) + "]", 8);
      if (l.converted_type == ConvertedType::kTimeMicros) return fixed("time64[us]", 8);
      auto [bits, is_signed] = IntegerOf(l);
      return fixed(is_signed ? "int64" : "uint64", 8);
    }
    case PhysicalType::kInt96:
      return {"timestamp[ns]", FieldBytes::kInt96Nanos, 8};
    case PhysicalType::kFloat:
      return fixed("float32", 4);
    case PhysicalType::kDouble:
      return fixed("float64", 8);
    case PhysicalType::kByteArray:
      return {IsText(l) ? "str" : "bytes", FieldBytes::kView, 0};
    case PhysicalType::kFixedLenByteArray:
      if (t.kind == K::kFloat16 && l.type_length == 2) return fixed("float16", 2);
      return {"bytes", FieldBytes::kView, 0};
  }
  return {"bytes", FieldBytes::kView, 0};
}

JsonValue UInt(uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) return JsonValue{static_cast<int64_t>(v)};
  return JsonValue{JsonValue::BigInt{std::to_string(v)}};
}

// One fixed-width value as JSON (floats as `floats` says).
JsonValue ScalarJson(Scalar s, const char* p, FloatForm floats) {
  switch (s.num) {
    case Num::kBool:
      return JsonValue{*p != 0};
    case Num::kFloat: {
      double d = 0;
      if (s.width == 2) d = HalfToDouble(LoadLE<uint16_t>(p));
      if (s.width == 4) {
        float f;
        std::memcpy(&f, p, 4);
        d = f;
      }
      if (s.width == 8) std::memcpy(&d, p, 8);
      return floats == FloatForm::kNumber ? JsonValue{d} : JsonValue{PyFloatRepr(d)};
    }
    case Num::kUnsigned: {
      uint64_t v = 0;
      for (size_t i = 0; i < s.width; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
      return UInt(v);
    }
    case Num::kSigned: {
      uint64_t v = 0;
      for (size_t i = 0; i < s.width; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
      const int shift = static_cast<int>(64 - 8 * s.width);
      return JsonValue{static_cast<int64_t>(v << shift) >> shift};
    }
    case Num::kNone:
      break;
  }
  return JsonValue{};
}

}  // namespace

FieldEncoding LeafValueEncoding(const LeafColumn& leaf) { return LeafEncoding(leaf); }

Result<FieldEncoding> FieldEncodingOf(const Schema& schema, size_t field, std::string_view file) {
  SLUICE_RETURN_IF_ERROR(ReadableField(schema, field, file));
  const Field& f = schema.fields[field];
  FieldEncoding leaf = LeafEncoding(schema.leaves[f.first_leaf]);
  if (f.list_depth == 0) return leaf;
  std::string name = leaf.name;
  for (size_t d = 0; d < f.list_depth; ++d) name = "list<" + name + ">";
  // INT96 elements pack as their int64 nanoseconds, so "list<timestamp[ns]>"
  // means packed int64 whichever physical type the file stores.
  if (f.list_depth == 1 &&
      (leaf.bytes == FieldBytes::kFixed || leaf.bytes == FieldBytes::kInt96Nanos)) {
    return FieldEncoding{std::move(name), FieldBytes::kPackedList, leaf.width};
  }
  return FieldEncoding{std::move(name), FieldBytes::kJsonText, 0};
}

bool IsParquetFieldEncoding(std::string_view e) {
  while (e.starts_with("list<") && e.ends_with(">")) e = e.substr(5, e.size() - 6);
  return ScalarOf(e).num != Num::kNone || e == "str" || e == "bytes" ||
         (e.starts_with("decimal(") && e.ends_with(")"));
}

Result<std::string> MdsEncodingOf(std::string_view e) {
  if (!IsParquetFieldEncoding(e)) {
    return UnimplementedError("unknown Parquet field encoding '" + std::string(e) + "'");
  }
  // The MDS integer of a Parquet-only fixed-width name.
  const auto mds_scalar = [](std::string_view name) -> std::string {
    const Scalar s = ScalarOf(name);
    if (name == "bool") return "uint8";
    if (name.starts_with("date32") || name.starts_with("time32")) return "int32";
    if (name.starts_with("time64") || name.starts_with("timestamp")) return "int64";
    return s.num == Num::kNone ? std::string() : std::string(name);
  };
  if (e.starts_with("list<")) {
    const std::string element = mds_scalar(e.substr(5, e.size() - 6));
    return element.empty() ? std::string("json") : "ndarray:" + element;
  }
  if (e.starts_with("decimal(")) return std::string("str_decimal");
  if (e == "str" || e == "bytes") return std::string(e);
  return mds_scalar(e);
}

Result<std::vector<std::pair<std::string, JsonValue>>> FieldValueJson(std::string_view encoding,
                                                                      std::string_view bytes,
                                                                      FloatForm floats) {
  using Members = std::vector<std::pair<std::string, JsonValue>>;
  if (!IsParquetFieldEncoding(encoding)) {
    return UnimplementedError("unknown Parquet field encoding '" + std::string(encoding) + "'");
  }
  const bool list = encoding.starts_with("list<");
  const std::string_view element = list ? encoding.substr(5, encoding.size() - 6) : encoding;
  const Scalar s = ScalarOf(element);
  const bool is_float = s.num == Num::kFloat;
  if (bytes.data() == nullptr) return Members{{"value", JsonValue{}}};
  const auto bad = [&](const std::string& what) {
    return CorruptError("a " + std::string(encoding) + " field of " + std::to_string(bytes.size()) +
                        " bytes: " + what);
  };
  if (list && s.num != Num::kNone) {
    if (bytes.size() % s.width != 0) return bad("not a multiple of " + std::to_string(s.width));
    JsonValue::Array items;
    for (size_t at = 0; at < bytes.size(); at += s.width) {
      items.push_back(ScalarJson(s, bytes.data() + at, floats));
    }
    return Members{{is_float ? "value_repr" : "value", JsonValue{std::move(items)}}};
  }
  if (list) {
    SLUICE_ASSIGN_OR_RETURN(JsonValue v, ParsePyJson(bytes));
    return Members{{"value", std::move(v)}};
  }
  if (s.num != Num::kNone) {
    if (bytes.size() != s.width) return bad("expected " + std::to_string(s.width));
    return Members{{is_float ? "value_repr" : "value", ScalarJson(s, bytes.data(), floats)}};
  }
  if (element == "str") return Members{{"value", JsonValue{std::string(bytes)}}};
  if (element.starts_with("decimal(")) return Members{{"value_str", JsonValue{std::string(bytes)}}};
  return Members{};  // bytes: raw_hex says it all
}

Result<std::vector<std::pair<std::string, JsonValue>>> MaskedFieldValueJson(
    std::string_view encoding, std::string_view bytes, std::string_view validity, FloatForm floats) {
  using Members = std::vector<std::pair<std::string, JsonValue>>;
  const bool list = encoding.starts_with("list<") && encoding.ends_with(">");
  const Scalar s = list ? ScalarOf(encoding.substr(5, encoding.size() - 6)) : Scalar{};
  if (s.num == Num::kNone) {
    return InvalidArgumentError("a mask of null elements on a " + std::string(encoding) +
                                " field, which is no packed list");
  }
  if (bytes.size() % s.width != 0 || validity.size() != bytes.size() / s.width) {
    return CorruptError("a " + std::string(encoding) + " field of " + std::to_string(bytes.size()) +
                        " bytes with " + std::to_string(validity.size()) +
                        " validity bytes (one per element expected)");
  }
  JsonValue::Array items;
  for (size_t i = 0; i < validity.size(); ++i) {
    items.push_back(validity[i] == 0 ? JsonValue{}
                                     : ScalarJson(s, bytes.data() + i * s.width, floats));
  }
  return Members{{s.num == Num::kFloat ? "value_repr" : "value", JsonValue{std::move(items)}}};
}

}  // namespace sluice::parquet

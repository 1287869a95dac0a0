#include "formats/mds/column_encoding.h"

#include <utility>

namespace sluice {
namespace {

struct NamedKind {
  std::string_view name;
  EncodingKind kind;
  uint64_t size;  // 0 = variable
};

constexpr NamedKind kKinds[] = {
    {"bytes", EncodingKind::kBytes, 0},
    {"str", EncodingKind::kStr, 0},
    {"int", EncodingKind::kInt, 8},
    {"int8", EncodingKind::kInt8, 1},
    {"int16", EncodingKind::kInt16, 2},
    {"int32", EncodingKind::kInt32, 4},
    {"int64", EncodingKind::kInt64, 8},
    {"uint8", EncodingKind::kUInt8, 1},
    {"uint16", EncodingKind::kUInt16, 2},
    {"uint32", EncodingKind::kUInt32, 4},
    {"uint64", EncodingKind::kUInt64, 8},
    {"float16", EncodingKind::kFloat16, 2},
    {"float32", EncodingKind::kFloat32, 4},
    {"float64", EncodingKind::kFloat64, 8},
    {"str_int", EncodingKind::kStrInt, 0},
    {"str_float", EncodingKind::kStrFloat, 0},
    {"str_decimal", EncodingKind::kStrDecimal, 0},
    {"json", EncodingKind::kJson, 0},
    {"pkl", EncodingKind::kPkl, 0},
    {"pil", EncodingKind::kPil, 0},
    {"jpeg", EncodingKind::kJpeg, 0},
    {"png", EncodingKind::kPng, 0},
    {"jpeg_array", EncodingKind::kJpegArray, 0},
    {"jpegarray", EncodingKind::kJpegArray, 0},
    {"list[pil]", EncodingKind::kListPil, 0},
    {"list[jpeg]", EncodingKind::kListJpeg, 0},
    {"list[png]", EncodingKind::kListPng, 0},
    {"ndarray", EncodingKind::kNdarray, 0},
};

struct NamedDtype {
  std::string_view name;
  NdDtype dtype;
};

constexpr NamedDtype kDtypes[] = {
    {"uint8", NdDtype::kUInt8},     {"int8", NdDtype::kInt8},
    {"uint16", NdDtype::kUInt16},   {"int16", NdDtype::kInt16},
    {"float16", NdDtype::kFloat16}, {"uint32", NdDtype::kUInt32},
    {"int32", NdDtype::kInt32},     {"float32", NdDtype::kFloat32},
    {"uint64", NdDtype::kUInt64},   {"int64", NdDtype::kInt64},
    {"float64", NdDtype::kFloat64},
};

Status Unknown(std::string_view encoding, std::string_view column,
               std::string_view why) {
  std::string msg = "unknown MDS encoding '" + std::string(encoding) + "'";
  if (!column.empty()) msg += " for column '" + std::string(column) + "'";
  if (!why.empty()) msg += ": " + std::string(why);
  return UnimplementedError(std::move(msg));
}

// Parses "d0,d1,..." (plain decimal digits, each > 0).
bool ParseShape(std::string_view text, std::vector<uint64_t>* shape) {
  shape->clear();
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : comma - pos);
    if (part.empty() || part.size() > 10) return false;
    uint64_t v = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (v == 0) return false;
    shape->push_back(v);
    if (shape->size() > kMaxNdim) return false;
    if (comma == std::string_view::npos) return true;
    pos = comma + 1;
  }
}

}  // namespace

const char* NdDtypeName(NdDtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d.name.data();  // literals: NUL-terminated
  }
  return "?";
}

unsigned NdDtypeItemSize(NdDtype dtype) {
  return static_cast<unsigned>(dtype) / 8;
}

bool NdDtypeIsFloat(NdDtype dtype) {
  return (static_cast<unsigned>(dtype) & 2) != 0;
}

bool NdDtypeIsSigned(NdDtype dtype) {
  return (static_cast<unsigned>(dtype) & 1) != 0;
}

std::string DescribeColumn(const ColumnEncoding& enc) {
  if (enc.column.empty()) return enc.name + " encoding";
  return "column '" + enc.column + "' (" + enc.name + ")";
}

std::optional<FieldArrayLayout> ArrayLayoutOf(const ColumnEncoding& enc) {
  if (enc.custom) return std::nullopt;
  switch (enc.kind) {
    case EncodingKind::kInt:
    case EncodingKind::kInt64: return FieldArrayLayout{NdDtype::kInt64, {}};
    case EncodingKind::kInt8: return FieldArrayLayout{NdDtype::kInt8, {}};
    case EncodingKind::kInt16: return FieldArrayLayout{NdDtype::kInt16, {}};
    case EncodingKind::kInt32: return FieldArrayLayout{NdDtype::kInt32, {}};
    case EncodingKind::kUInt8: return FieldArrayLayout{NdDtype::kUInt8, {}};
    case EncodingKind::kUInt16: return FieldArrayLayout{NdDtype::kUInt16, {}};
    case EncodingKind::kUInt32: return FieldArrayLayout{NdDtype::kUInt32, {}};
    case EncodingKind::kUInt64: return FieldArrayLayout{NdDtype::kUInt64, {}};
    case EncodingKind::kFloat16: return FieldArrayLayout{NdDtype::kFloat16, {}};
    case EncodingKind::kFloat32: return FieldArrayLayout{NdDtype::kFloat32, {}};
    case EncodingKind::kFloat64: return FieldArrayLayout{NdDtype::kFloat64, {}};
    case EncodingKind::kNdarray:
      if (enc.nd_dtype && enc.nd_shape) return FieldArrayLayout{*enc.nd_dtype, *enc.nd_shape};
      return std::nullopt;
    default: return std::nullopt;
  }
}

FieldValueForm ValueFormOf(const ColumnEncoding& enc) {
  if (ArrayLayoutOf(enc)) return FieldValueForm::kValues;
  if (enc.custom) return FieldValueForm::kFramed;
  switch (enc.kind) {
    case EncodingKind::kStr:
    case EncodingKind::kStrInt:
    case EncodingKind::kStrFloat:
    case EncodingKind::kStrDecimal:
    case EncodingKind::kJson: return FieldValueForm::kText;
    case EncodingKind::kBytes:
    case EncodingKind::kPkl:
    case EncodingKind::kJpeg:
    case EncodingKind::kPng: return FieldValueForm::kBytes;
    default: return FieldValueForm::kFramed;
  }
}

std::optional<NdDtype> NdDtypeFromName(std::string_view name) {
  for (const auto& d : kDtypes) {
    if (d.name == name) return d.dtype;
  }
  return std::nullopt;
}

std::optional<NdDtype> NdDtypeFromCode(uint8_t code) {
  for (const auto& d : kDtypes) {
    if (static_cast<uint8_t>(d.dtype) == code) return d.dtype;
  }
  return std::nullopt;
}

Result<ColumnEncoding> ParseColumnEncoding(std::string_view encoding,
                                           std::string_view column) {
  ColumnEncoding out;
  out.name = std::string(encoding);
  out.column = std::string(column);
  for (const auto& k : kKinds) {
    if (k.name == encoding) {
      out.kind = k.kind;
      if (k.size != 0) out.fixed_size = k.size;
      return out;
    }
  }
  constexpr std::string_view kNd = "ndarray:";
  if (encoding.substr(0, kNd.size()) != kNd) {
    return Unknown(encoding, column, "");
  }
  out.kind = EncodingKind::kNdarray;
  std::string_view rest = encoding.substr(kNd.size());
  size_t colon = rest.find(':');
  std::string_view dtype_name = rest.substr(0, colon);
  std::optional<NdDtype> dtype = NdDtypeFromName(dtype_name);
  if (!dtype) {
    return Unknown(encoding, column,
                   "'" + std::string(dtype_name) + "' is not an ndarray dtype");
  }
  out.nd_dtype = dtype;
  if (colon == std::string_view::npos) return out;
  std::vector<uint64_t> shape;
  if (!ParseShape(rest.substr(colon + 1), &shape)) {
    return Unknown(encoding, column,
                   "the shape must be 1 to 63 positive integers separated by ','");
  }
  uint64_t size = NdDtypeItemSize(*dtype);
  for (uint64_t d : shape) {
    // Each d < 10^10 < 2^34 and size stays < 2^32, so this cannot overflow.
    size *= d;
    if (size >= (uint64_t{1} << 32)) {
      return Unknown(encoding, column, "the array is larger than 4 GiB");
    }
  }
  out.nd_shape = std::move(shape);
  out.fixed_size = size;
  return out;
}

Result<std::optional<uint64_t>> ColumnEncodingSize(std::string_view encoding) {
  SLUICE_ASSIGN_OR_RETURN(ColumnEncoding e, ParseColumnEncoding(encoding, ""));
  return e.fixed_size;
}

bool IsMdsEncoding(std::string_view encoding) {
  return ParseColumnEncoding(encoding, "").ok();
}

bool IsCustomEncodingName(std::string_view encoding) {
  std::string_view name = encoding.substr(0, encoding.find(':'));
  if (name.empty() || name == "ndarray") return false;
  for (const auto& k : kKinds) {
    if (k.name == name) return false;
  }
  return true;
}

bool IsUnsafeEncoding(std::string_view encoding) {
  for (const auto& k : kKinds) {
    if (k.name == encoding) return k.kind == EncodingKind::kPkl;
  }
  return false;
}

std::string UnsafeEncodingMessage(std::string_view column, std::string_view encoding) {
  return "Column " + std::string(column) + " contains an unsafe type: " + std::string(encoding) +
         ". To proceed anyway, set ``allow_unsafe_types=True``.";
}

std::vector<std::string_view> BuiltinEncodingNames() {
  std::vector<std::string_view> out;
  for (const auto& k : kKinds) out.push_back(k.name);
  return out;
}

bool CustomEncodings::Accepts(std::string_view encoding) const {
  return any || names.contains(encoding) || names.contains(encoding.substr(0, encoding.find(':')));
}

Status CheckEncodingRegistered(std::string_view encoding, std::string_view column,
                               const CustomEncodings& custom) {
  if (!IsCustomEncodingName(encoding) || custom.Accepts(encoding)) return Status::Ok();
  return UnimplementedError("column '" + std::string(column) + "' has encoding '" +
                            std::string(encoding) + "', which is neither built in nor registered");
}

Result<ColumnEncoding> CustomColumnEncoding(std::string_view encoding, std::string_view column,
                                            std::optional<uint64_t> size) {
  if (!IsCustomEncodingName(encoding)) {
    return InvalidArgumentError("column '" + std::string(column) + "': '" +
                                std::string(encoding) +
                                "' cannot name a custom encoding (empty, or a built-in one)");
  }
  if (size && *size >= (uint64_t{1} << 32)) {
    return InvalidArgumentError("column '" + std::string(column) + "': custom encoding '" +
                                std::string(encoding) + "' has size " + std::to_string(*size) +
                                ", more than a sample can hold (4 GiB)");
  }
  ColumnEncoding out;
  out.name = std::string(encoding);
  out.column = std::string(column);
  out.kind = EncodingKind::kBytes;
  out.fixed_size = size;
  out.custom = true;
  return out;
}

}  // namespace sluice

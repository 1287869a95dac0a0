#include "formats/mds/column_encoder.h"

#include <limits>

#include "base/bytes.h"
#include "base/utf8.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/float16.h"

namespace sluice {
namespace {

Status EncoderWrongType(const ColumnEncoding& enc, std::string_view given) {
  return InvalidArgumentError(DescribeColumn(enc) + ": cannot store " + std::string(given));
}

template <typename T>
std::string LEBytes(T v) {
  std::string out;
  AppendLE(out, v);
  return out;
}

Status OutOfRange(const ColumnEncoding& enc, const std::string& value) {
  return InvalidArgumentError(DescribeColumn(enc) + ": value " + value +
                              " is out of range for " + enc.name);
}

// Range of the integer kinds, as [min, max] over int64/uint64.
struct IntRange {
  bool is_signed;
  int64_t smin;
  uint64_t umax;
  unsigned bytes;
};

bool IntRangeOf(EncodingKind kind, IntRange* r) {
  switch (kind) {
    case EncodingKind::kInt:
    case EncodingKind::kInt64: *r = {true, INT64_MIN, INT64_MAX, 8}; return true;
    case EncodingKind::kInt32: *r = {true, INT32_MIN, INT32_MAX, 4}; return true;
    case EncodingKind::kInt16: *r = {true, INT16_MIN, INT16_MAX, 2}; return true;
    case EncodingKind::kInt8: *r = {true, INT8_MIN, INT8_MAX, 1}; return true;
    case EncodingKind::kUInt64: *r = {false, 0, UINT64_MAX, 8}; return true;
    case EncodingKind::kUInt32: *r = {false, 0, UINT32_MAX, 4}; return true;
    case EncodingKind::kUInt16: *r = {false, 0, UINT16_MAX, 2}; return true;
    case EncodingKind::kUInt8: *r = {false, 0, UINT8_MAX, 1}; return true;
    default: return false;
  }
}

std::string LowBytes(uint64_t bits, unsigned n) {
  std::string out = LEBytes(bits);
  out.resize(n);
  return out;
}

bool IsFloatKind(EncodingKind k) {
  return k == EncodingKind::kFloat16 || k == EncodingKind::kFloat32 ||
         k == EncodingKind::kFloat64;
}

// Stores a float column from a value already rounded to double by the caller
// (float32 is passed separately so that int -> float32 rounds once).
std::string FloatBytes(EncodingKind k, double d, float f) {
  switch (k) {
    case EncodingKind::kFloat16: return LEBytes(DoubleToHalf(d));
    case EncodingKind::kFloat32: return LEBytes(f);
    default: return LEBytes(d);
  }
}

}  // namespace

Result<std::string> EncodeInt64(const ColumnEncoding& enc, int64_t value) {
  IntRange r;
  if (IntRangeOf(enc.kind, &r)) {
    if (value < 0 ? (!r.is_signed || value < r.smin)
                  : static_cast<uint64_t>(value) > r.umax) {
      return OutOfRange(enc, std::to_string(value));
    }
    return LowBytes(static_cast<uint64_t>(value), r.bytes);
  }
  if (IsFloatKind(enc.kind)) {
    return FloatBytes(enc.kind, static_cast<double>(value), static_cast<float>(value));
  }
  if (enc.kind == EncodingKind::kStrInt) return std::to_string(value);
  return EncoderWrongType(enc, "an integer");
}

Result<std::string> EncodeUInt64(const ColumnEncoding& enc, uint64_t value) {
  IntRange r;
  if (IntRangeOf(enc.kind, &r)) {
    const uint64_t max =
        r.is_signed ? static_cast<uint64_t>(INT64_MAX) >> (64 - 8 * r.bytes) : r.umax;
    if (value > max) return OutOfRange(enc, std::to_string(value));
    return LowBytes(value, r.bytes);
  }
  if (IsFloatKind(enc.kind)) {
    return FloatBytes(enc.kind, static_cast<double>(value), static_cast<float>(value));
  }
  if (enc.kind == EncodingKind::kStrInt) return std::to_string(value);
  return EncoderWrongType(enc, "an integer");
}

Result<std::string> EncodeDouble(const ColumnEncoding& enc, double value) {
  if (IsFloatKind(enc.kind)) {
    return FloatBytes(enc.kind, value, static_cast<float>(value));
  }
  if (enc.kind == EncodingKind::kStrFloat) return PyFloatRepr(value);
  return EncoderWrongType(enc, "a float");
}

Result<std::string> EncodeText(const ColumnEncoding& enc, std::string_view text) {
  switch (enc.kind) {
    case EncodingKind::kStr: {
      if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
        return InvalidArgumentError(DescribeColumn(enc) + ": invalid UTF-8 at byte " +
                                    std::to_string(bad));
      }
      return std::string(text);
    }
    case EncodingKind::kStrInt: {
      std::string_view digits = text;
      if (!digits.empty() && digits[0] == '-') digits.remove_prefix(1);
      bool ok = !digits.empty() && (digits[0] != '0' || digits.size() == 1) &&
                !(text[0] == '-' && digits == "0");
      for (char c : digits) ok = ok && c >= '0' && c <= '9';
      if (!ok) {
        return InvalidArgumentError(DescribeColumn(enc) + ": '" + std::string(text.substr(0, 64)) +
                                    "' is not the decimal text of an integer");
      }
      return std::string(text);
    }
    case EncodingKind::kStrDecimal: {
      bool ok = !text.empty();
      for (char c : text) ok = ok && c > ' ' && c < 0x7f;
      if (!ok) {
        return InvalidArgumentError(DescribeColumn(enc) + ": '" + std::string(text.substr(0, 64)) +
                                    "' is not the text of a Decimal");
      }
      return std::string(text);
    }
    default:
      return EncoderWrongType(enc, "text");
  }
}

Result<std::string> EncodeJson(const ColumnEncoding& enc, const JsonValue& value) {
  if (enc.kind != EncodingKind::kJson) return EncoderWrongType(enc, "a JSON value");
  auto text = DumpPyJson(value, /*sort_keys=*/false);
  if (!text.ok()) return text.status().WithContext(DescribeColumn(enc));
  return std::move(text).value();
}

Result<std::string> EncodeRawBytes(const ColumnEncoding& enc, std::string_view bytes) {
  switch (enc.kind) {
    case EncodingKind::kBytes:
    case EncodingKind::kPkl:
    case EncodingKind::kJpeg:
    case EncodingKind::kPng:
      return std::string(bytes);
    default:
      return EncoderWrongType(enc, "raw bytes");
  }
}

Result<std::string> EncodePilImage(uint32_t width, uint32_t height,
                                   std::string_view mode, std::string_view pixels) {
  if (mode.empty() || mode.size() > 16) {
    return InvalidArgumentError("PIL mode '" + std::string(mode.substr(0, 16)) +
                                "' must be 1 to 16 characters");
  }
  const int64_t need = PilPixelBytes(mode, width, height);
  if (need == -2 || (need >= 0 && pixels.size() != static_cast<uint64_t>(need))) {
    return InvalidArgumentError("PIL " + std::string(mode) + " image " +
                                std::to_string(width) + "x" + std::to_string(height) +
                                " needs " + std::to_string(need) + " pixel bytes, got " +
                                std::to_string(pixels.size()));
  }
  std::string out;
  out.reserve(12 + mode.size() + pixels.size());
  AppendLE<uint32_t>(out, width);
  AppendLE<uint32_t>(out, height);
  AppendLE<uint32_t>(out, static_cast<uint32_t>(mode.size()));
  out.append(mode);
  out.append(pixels);
  return out;
}

Result<std::string> EncodePil(const ColumnEncoding& enc, uint32_t width, uint32_t height,
                              std::string_view mode, std::string_view pixels) {
  if (enc.kind != EncodingKind::kPil) return EncoderWrongType(enc, "a PIL image");
  auto out = EncodePilImage(width, height, mode, pixels);
  if (!out.ok()) return out.status().WithContext(DescribeColumn(enc));
  return out;
}

Result<std::string> EncodeList(const ColumnEncoding& enc,
                               const std::vector<std::string_view>& items) {
  bool reserved;
  switch (enc.kind) {
    case EncodingKind::kListPil:
    case EncodingKind::kListJpeg:
    case EncodingKind::kListPng: reserved = true; break;
    case EncodingKind::kJpegArray: reserved = false; break;
    default: return EncoderWrongType(enc, "a list of images");
  }
  uint64_t total = (reserved ? 8 : 4) + uint64_t{4} * items.size();
  for (std::string_view item : items) total += item.size();
  if (items.size() > UINT32_MAX || total > UINT32_MAX) {
    return InvalidArgumentError(DescribeColumn(enc) + ": list of " + std::to_string(items.size()) +
                                " items, " + std::to_string(total) +
                                " bytes, does not fit in 32 bits");
  }
  std::string out;
  out.reserve(total);
  if (reserved) AppendLE<uint32_t>(out, 0);
  AppendLE<uint32_t>(out, static_cast<uint32_t>(items.size()));
  for (std::string_view item : items) AppendLE<uint32_t>(out, static_cast<uint32_t>(item.size()));
  for (std::string_view item : items) out.append(item);
  return out;
}

Result<std::string> EncodeNdArrayHeader(const ColumnEncoding& enc, NdDtype dtype,
                                        const std::vector<uint64_t>& shape) {
  if (enc.kind != EncodingKind::kNdarray) return EncoderWrongType(enc, "an ndarray");
  if (enc.nd_dtype && *enc.nd_dtype != dtype) {
    return InvalidArgumentError(DescribeColumn(enc) + ": array dtype " + NdDtypeName(dtype) +
                                " differs from the column's " + NdDtypeName(*enc.nd_dtype));
  }
  if (shape.empty() || shape.size() > kMaxNdim) {
    return InvalidArgumentError(DescribeColumn(enc) + ": array has " + std::to_string(shape.size()) +
                                " dimensions, expected 1 to 63");
  }
  if (enc.nd_shape && *enc.nd_shape != shape) {
    return InvalidArgumentError(DescribeColumn(enc) + ": array shape differs from the column's");
  }
  uint64_t bytes = NdDtypeItemSize(dtype);
  uint64_t largest = 0;
  for (uint64_t d : shape) {
    if (d == 0) {
      return InvalidArgumentError(DescribeColumn(enc) + ": array has a dimension of 0");
    }
    if (bytes > UINT32_MAX / d) {
      return InvalidArgumentError(DescribeColumn(enc) + ": array is larger than 4 GiB");
    }
    bytes *= d;
    if (d > largest) largest = d;
  }
  std::string out;
  out.reserve(2 + 8 * shape.size());
  if (!enc.nd_dtype) out.push_back(static_cast<char>(dtype));
  if (!enc.nd_shape) {
    unsigned code = largest < 256 ? 0 : largest < 65536 ? 1 : largest < (uint64_t{1} << 32) ? 2 : 3;
    out.push_back(static_cast<char>((shape.size() << 2) | code));
    for (uint64_t d : shape) {
      switch (code) {
        case 0: out.push_back(static_cast<char>(d)); break;
        case 1: AppendLE<uint16_t>(out, static_cast<uint16_t>(d)); break;
        case 2: AppendLE<uint32_t>(out, static_cast<uint32_t>(d)); break;
        default: AppendLE<uint64_t>(out, d); break;
      }
    }
  }
  return out;
}

Result<std::string> EncodeNdArray(const ColumnEncoding& enc, NdDtype dtype,
                                  const std::vector<uint64_t>& shape,
                                  std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(std::string out, EncodeNdArrayHeader(enc, dtype, shape));
  uint64_t bytes = NdDtypeItemSize(dtype);  // under 4 GiB: checked by the header
  for (uint64_t d : shape) bytes *= d;
  if (data.size() != bytes) {
    return InvalidArgumentError(DescribeColumn(enc) + ": array data is " + std::to_string(data.size()) +
                                " bytes, dtype and shape need " + std::to_string(bytes));
  }
  out.reserve(out.size() + data.size());
  out.append(data);
  return out;
}

}  // namespace sluice

#include "formats/mds/column_decoder.h"

#include <cmath>
#include <limits>
#include <string>

#include "base/bytes.h"
#include "base/utf8.h"
#include "formats/json/py_number_text.h"
#include "formats/mds/float16.h"

namespace sluice {
namespace {

Status DecoderWrongType(const ColumnEncoding& enc, std::string_view wanted) {
  return InvalidArgumentError(DescribeColumn(enc) + ": cannot be decoded as " +
                              std::string(wanted));
}

Status Corrupt(const ColumnEncoding& enc, std::string message) {
  return CorruptError(DescribeColumn(enc) + ": " + message);
}

Status CheckSize(const ColumnEncoding& enc, std::string_view stored, size_t size) {
  if (stored.size() != size) {
    return Corrupt(enc, "field is " + std::to_string(stored.size()) +
                            " bytes, expected " + std::to_string(size));
  }
  return Status::Ok();
}

}  // namespace

Result<int64_t> DecodeInt64(const ColumnEncoding& enc, std::string_view stored) {
  const char* p = stored.data();
  switch (enc.kind) {
    case EncodingKind::kInt:
    case EncodingKind::kInt64:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 8));
      return static_cast<int64_t>(LoadLE<uint64_t>(p));
    case EncodingKind::kInt32:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 4));
      return static_cast<int64_t>(static_cast<int32_t>(LoadLE<uint32_t>(p)));
    case EncodingKind::kInt16:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 2));
      return static_cast<int64_t>(static_cast<int16_t>(LoadLE<uint16_t>(p)));
    case EncodingKind::kInt8:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 1));
      return static_cast<int64_t>(static_cast<int8_t>(p[0]));
    case EncodingKind::kUInt8:
    case EncodingKind::kUInt16:
    case EncodingKind::kUInt32: {
      SLUICE_ASSIGN_OR_RETURN(uint64_t v, DecodeUInt64(enc, stored));
      return static_cast<int64_t>(v);
    }
    default:
      return DecoderWrongType(enc, "a signed integer");
  }
}

Result<uint64_t> DecodeUInt64(const ColumnEncoding& enc, std::string_view stored) {
  const char* p = stored.data();
  switch (enc.kind) {
    case EncodingKind::kUInt64:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 8));
      return LoadLE<uint64_t>(p);
    case EncodingKind::kUInt32:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 4));
      return LoadLE<uint32_t>(p);
    case EncodingKind::kUInt16:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 2));
      return LoadLE<uint16_t>(p);
    case EncodingKind::kUInt8:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 1));
      return static_cast<uint8_t>(p[0]);
    default:
      return DecoderWrongType(enc, "an unsigned integer");
  }
}

Result<double> DecodeDouble(const ColumnEncoding& enc, std::string_view stored) {
  const char* p = stored.data();
  switch (enc.kind) {
    case EncodingKind::kFloat64: {
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 8));
      return LoadLE<double>(p);
    }
    case EncodingKind::kFloat32: {
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 4));
      return static_cast<double>(LoadLE<float>(p));
    }
    case EncodingKind::kFloat16:
      SLUICE_RETURN_IF_ERROR(CheckSize(enc, stored, 2));
      return HalfToDouble(LoadLE<uint16_t>(p));
    case EncodingKind::kStrFloat: {
      SLUICE_ASSIGN_OR_RETURN(std::string_view text, DecodeText(enc, stored));
      std::optional<double> v = ParsePyFloatText(text);
      if (!v) return Corrupt(enc, "'" + std::string(text.substr(0, 64)) + "' is not a float");
      return *v;
    }
    default:
      return DecoderWrongType(enc, "a float");
  }
}

Result<std::string_view> DecodeText(const ColumnEncoding& enc, std::string_view stored) {
  switch (enc.kind) {
    case EncodingKind::kStr:
    case EncodingKind::kStrInt:
    case EncodingKind::kStrFloat:
    case EncodingKind::kStrDecimal:
    case EncodingKind::kJson:
      break;
    default:
      return DecoderWrongType(enc, "text");
  }
  if (size_t bad = FindInvalidUtf8(stored); bad != std::string_view::npos) {
    return Corrupt(enc, "invalid UTF-8 at byte " + std::to_string(bad) +
                            " of the field");
  }
  return stored;
}

Result<std::string_view> DecodeRawBytes(const ColumnEncoding& enc, std::string_view stored) {
  switch (enc.kind) {
    case EncodingKind::kBytes:
    case EncodingKind::kPkl:
    case EncodingKind::kJpeg:
    case EncodingKind::kPng:
      return stored;
    default:
      return DecoderWrongType(enc, "raw bytes");
  }
}

int64_t PilPixelBytes(std::string_view mode, uint64_t width, uint64_t height) {
  if (width > (uint64_t{1} << 32) || height > (uint64_t{1} << 32)) return -2;
  uint64_t row;
  if (mode == "1") {
    row = (width + 7) / 8;
  } else {
    unsigned bpp;
    if (mode == "L" || mode == "P") {
      bpp = 1;
    } else if (mode == "LA" || mode == "La" || mode == "PA" || mode == "I;16" ||
               mode == "I;16L" || mode == "I;16B" || mode == "I;16N") {
      bpp = 2;
    } else if (mode == "RGB" || mode == "YCbCr" || mode == "LAB" || mode == "HSV") {
      bpp = 3;
    } else if (mode == "RGBA" || mode == "RGBa" || mode == "RGBX" || mode == "CMYK" ||
               mode == "I" || mode == "F") {
      bpp = 4;
    } else {
      return -1;
    }
    row = width * bpp;  // width <= 2^32, so no overflow
  }
  if (height != 0 && row > (uint64_t{1} << 62) / height) return -2;
  return static_cast<int64_t>(row * height);
}

Result<PilImageView> DecodePilImage(std::string_view stored, std::string_view what) {
  auto corrupt = [&](std::string m) {
    return CorruptError(std::string(what) + ": " + m);
  };
  if (stored.size() < 12) {
    return corrupt("PIL image of " + std::to_string(stored.size()) +
                   " bytes, expected at least the 12-byte header");
  }
  PilImageView img;
  img.width = LoadLE<uint32_t>(stored.data());
  img.height = LoadLE<uint32_t>(stored.data() + 4);
  const uint32_t mode_len = LoadLE<uint32_t>(stored.data() + 8);
  if (mode_len == 0 || mode_len > stored.size() - 12) {
    return corrupt("PIL mode length " + std::to_string(mode_len) +
                   " at offset 8 does not fit in " + std::to_string(stored.size()) +
                   " bytes");
  }
  img.mode = stored.substr(12, mode_len);
  for (char c : img.mode) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      return corrupt("PIL mode is not printable ASCII");
    }
  }
  std::string_view pixels = stored.substr(12 + mode_len);
  const int64_t need = PilPixelBytes(img.mode, img.width, img.height);
  if (need == -2) return corrupt("PIL image size overflows");
  if (need >= 0) {
    if (pixels.size() < static_cast<uint64_t>(need)) {
      return corrupt("PIL " + std::string(img.mode) + " image " +
                     std::to_string(img.width) + "x" + std::to_string(img.height) +
                     " needs " + std::to_string(need) + " pixel bytes, found " +
                     std::to_string(pixels.size()));
    }
    pixels = pixels.substr(0, static_cast<size_t>(need));
  }
  img.pixels = pixels;
  return img;
}

Result<PilImageView> DecodePil(const ColumnEncoding& enc, std::string_view stored) {
  if (enc.kind != EncodingKind::kPil) return DecoderWrongType(enc, "a PIL image");
  return DecodePilImage(stored, DescribeColumn(enc));
}

Result<std::vector<ListItemView>> DecodeList(const ColumnEncoding& enc,
                                             std::string_view stored) {
  size_t pos = 0;
  switch (enc.kind) {
    case EncodingKind::kListPil:
    case EncodingKind::kListJpeg:
    case EncodingKind::kListPng:
      pos = 4;  // reserved word
      break;
    case EncodingKind::kJpegArray:
      break;
    default:
      return DecoderWrongType(enc, "a list of images");
  }
  if (stored.size() < pos + 4) {
    return Corrupt(enc, "list field of " + std::to_string(stored.size()) +
                            " bytes has no count at offset " + std::to_string(pos));
  }
  const uint32_t count = LoadLE<uint32_t>(stored.data() + pos);
  pos += 4;
  const uint64_t header_end = pos + uint64_t{4} * count;
  if (header_end > stored.size()) {
    return Corrupt(enc, "list count " + std::to_string(count) + " needs " +
                            std::to_string(header_end) + " header bytes, field has " +
                            std::to_string(stored.size()));
  }
  std::vector<ListItemView> items;
  items.reserve(count);
  uint64_t data = header_end;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t len = LoadLE<uint32_t>(stored.data() + pos + 4 * size_t{i});
    if (len > stored.size() - data) {
      return Corrupt(enc, "list item " + std::to_string(i) + " of " +
                              std::to_string(len) + " bytes at offset " +
                              std::to_string(data) + " runs past the field end " +
                              std::to_string(stored.size()));
    }
    ListItemView item;
    item.offset = static_cast<uint32_t>(data);
    item.length = len;
    item.bytes = stored.substr(data, len);
    items.push_back(item);
    data += len;
  }
  return items;
}

uint64_t NdArrayView::element_count() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

Result<NdArrayView> DecodeNdArray(const ColumnEncoding& enc, std::string_view stored) {
  if (enc.kind != EncodingKind::kNdarray) return DecoderWrongType(enc, "an ndarray");
  NdArrayView out;
  size_t pos = 0;
  if (enc.nd_dtype) {
    out.dtype = *enc.nd_dtype;
  } else {
    if (stored.size() < 1) return Corrupt(enc, "empty field, expected a dtype code at offset 0");
    const auto code = static_cast<uint8_t>(stored[0]);
    auto dtype = NdDtypeFromCode(code);
    if (!dtype) {
      return Corrupt(enc, "unknown ndarray dtype code " + std::to_string(code) +
                              " at offset 0");
    }
    out.dtype = *dtype;
    pos = 1;
  }
  const unsigned item = NdDtypeItemSize(out.dtype);
  if (enc.nd_shape) {
    out.shape = *enc.nd_shape;
  } else {
    if (stored.size() < pos + 1) {
      return Corrupt(enc, "field ends before the shape byte at offset " + std::to_string(pos));
    }
    const auto b = static_cast<uint8_t>(stored[pos]);
    const unsigned ndim = b >> 2;
    const unsigned word = 1u << (b & 3);
    if (ndim == 0) {
      return Corrupt(enc, "ndarray with 0 dimensions (shape byte at offset " +
                              std::to_string(pos) + ")");
    }
    ++pos;
    if (stored.size() - pos < uint64_t{ndim} * word) {
      return Corrupt(enc, "shape of " + std::to_string(ndim) + " x " +
                              std::to_string(word) + "-byte words at offset " +
                              std::to_string(pos) + " runs past the field end " +
                              std::to_string(stored.size()));
    }
    out.shape.resize(ndim);
    for (unsigned i = 0; i < ndim; ++i) {
      const char* p = stored.data() + pos + size_t{i} * word;
      switch (word) {
        case 1: out.shape[i] = static_cast<uint8_t>(*p); break;
        case 2: out.shape[i] = LoadLE<uint16_t>(p); break;
        case 4: out.shape[i] = LoadLE<uint32_t>(p); break;
        default: out.shape[i] = LoadLE<uint64_t>(p); break;
      }
    }
    pos += size_t{ndim} * word;
  }
  // The data must be exactly prod(shape) * itemsize; compute without
  // overflow by bounding the product with the bytes available.
  const uint64_t avail = stored.size() - pos;
  uint64_t bytes = item;
  for (uint64_t d : out.shape) {
    if (d != 0 && bytes > avail / d) {
      return Corrupt(enc, "ndarray shape needs more than the " + std::to_string(avail) +
                              " data bytes at offset " + std::to_string(pos));
    }
    bytes *= d;
  }
  if (bytes != avail) {
    return Corrupt(enc, "ndarray " + std::string(NdDtypeName(out.dtype)) + " data at offset " +
                            std::to_string(pos) + " is " + std::to_string(avail) +
                            " bytes, the shape needs " + std::to_string(bytes));
  }
  out.data = stored.substr(pos);
  return out;
}

namespace {

template <typename T>
T Elem(const NdArrayView& a, uint64_t i) {
  return LoadLE<T>(a.data.data() + i * sizeof(T));
}

}  // namespace

double NdElementAsDouble(const NdArrayView& a, uint64_t i) {
  switch (a.dtype) {
    case NdDtype::kFloat16: return HalfToDouble(Elem<uint16_t>(a, i));
    case NdDtype::kFloat32: return static_cast<double>(Elem<float>(a, i));
    case NdDtype::kFloat64: return Elem<double>(a, i);
    default:
      return NdDtypeIsSigned(a.dtype) ? static_cast<double>(NdElementAsInt64(a, i))
                                      : static_cast<double>(NdElementAsUInt64(a, i));
  }
}

int64_t NdElementAsInt64(const NdArrayView& a, uint64_t i) {
  switch (a.dtype) {
    case NdDtype::kInt8: return Elem<int8_t>(a, i);
    case NdDtype::kInt16: return Elem<int16_t>(a, i);
    case NdDtype::kInt32: return Elem<int32_t>(a, i);
    case NdDtype::kInt64: return Elem<int64_t>(a, i);
    case NdDtype::kFloat16:
    case NdDtype::kFloat32:
    case NdDtype::kFloat64: {
      const double d = NdElementAsDouble(a, i);
      // Out-of-range conversion would be UB: clamp (NaN -> 0).
      if (!(d == d)) return 0;
      if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(d);
    }
    default: return static_cast<int64_t>(NdElementAsUInt64(a, i));
  }
}

uint64_t NdElementAsUInt64(const NdArrayView& a, uint64_t i) {
  switch (a.dtype) {
    case NdDtype::kUInt8: return Elem<uint8_t>(a, i);
    case NdDtype::kUInt16: return Elem<uint16_t>(a, i);
    case NdDtype::kUInt32: return Elem<uint32_t>(a, i);
    case NdDtype::kUInt64: return Elem<uint64_t>(a, i);
    case NdDtype::kFloat16:
    case NdDtype::kFloat32:
    case NdDtype::kFloat64: {
      const double d = NdElementAsDouble(a, i);
      if (!(d > 0)) return 0;
      if (d >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
      return static_cast<uint64_t>(d);
    }
    default: return static_cast<uint64_t>(NdElementAsInt64(a, i));
  }
}

}  // namespace sluice

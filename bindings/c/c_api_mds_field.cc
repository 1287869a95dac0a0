// One MDS field of a built-in encoding, encoded and decoded for a binding by
// the engine's encoders and decoders (formats/mds column_encoder.h,
// column_decoder.h, EncodeMdsValue): the one owner of every built-in
// encoding's byte layout. A binding makes only its own objects (Python's
// str, pickles, PIL images) from what these give.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "bindings/c/c_api_mds_value.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/column_encoder.h"
#include "formats/mds/column_encoding.h"
#include "formats/mds/mds_writer.h"

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;
using sluice::capi::View;

// The encoding of one value of no column: errors say "int8 encoding: ...".
sluice::Result<sluice::ColumnEncoding> ValueEncoding(const char* encoding) {
  return sluice::ParseColumnEncoding(encoding, "");
}

// Copies an encoded field into the caller's buffer; a short one is
// SLUICE_ERANGE with *len set to the size needed.
sluice_status Emit(const sluice::Result<std::string>& bytes, uint8_t* buf, uint64_t cap,
                   uint64_t* len) {
  if (!bytes.ok()) return Fail(bytes.status());
  *len = bytes->size();
  if (bytes->size() > cap) {
    return Fail(sluice::OutOfRangeError("encoded value needs " + std::to_string(bytes->size()) +
                                        " bytes, the buffer has " + std::to_string(cap)));
  }
  if (!bytes->empty()) std::memcpy(buf, bytes->data(), bytes->size());
  return SLUICE_OK;
}

sluice_status CheckOut(const char* fn, const char* encoding, uint8_t* buf, uint64_t cap,
                       uint64_t* len) {
  if (encoding == nullptr) return NullArgument(fn, "encoding");
  if (len == nullptr) return NullArgument(fn, "len");
  if (buf == nullptr && cap > 0) return NullArgument(fn, "buf");
  return SLUICE_OK;
}

// A decoder's steps before its own: its arguments checked, `encoding`
// parsed; then `decode(encoding, field)`.
template <typename F>
sluice_status DecodeField(const char* fn, const char* encoding, const uint8_t* field,
                          uint64_t size, const void* out, F&& decode) {
  return Guard(fn, [&] {
    if (encoding == nullptr) return NullArgument(fn, "encoding");
    if (field == nullptr && size > 0) return NullArgument(fn, "field");
    if (out == nullptr) return NullArgument(fn, "out");
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    return decode(*enc, View({field, size}));
  });
}

template <typename T>
sluice_status EncodeScalar(const char* fn, const char* encoding, T value, uint8_t* buf,
                           uint64_t cap, uint64_t* len) {
  if (sluice_status st = CheckOut(fn, encoding, buf, cap, len); st != SLUICE_OK) return st;
  auto enc = ValueEncoding(encoding);
  if (!enc.ok()) return Fail(enc.status());
  return Emit(sluice::EncodeMdsValue(*enc, sluice::MdsValue(value)), buf, cap, len);
}

// The field of a value given as bytes: raw kinds store them, text kinds
// check and store the text, json parses the text and writes it again.
sluice::Result<std::string> EncodeBytesValue(const sluice::ColumnEncoding& enc,
                                             std::string_view value) {
  switch (enc.kind) {
    case sluice::EncodingKind::kJson: {
      auto parsed = sluice::ParsePyJson(value);
      if (!parsed.ok()) return parsed.status().WithContext(sluice::DescribeColumn(enc));
      return sluice::EncodeJson(enc, *parsed);
    }
    case sluice::EncodingKind::kStr:
    case sluice::EncodingKind::kStrInt:
    case sluice::EncodingKind::kStrDecimal:
      return sluice::EncodeText(enc, value);
    default:
      return sluice::EncodeRawBytes(enc, value);
  }
}

// The value inside a field of a text kind (its UTF-8 text, checked) or of a
// raw kind (the stored bytes).
sluice::Result<std::string_view> DecodeBytesValue(const sluice::ColumnEncoding& enc,
                                                  std::string_view stored) {
  if (sluice::ValueFormOf(enc) == sluice::FieldValueForm::kText) {
    return sluice::DecodeText(enc, stored);
  }
  return sluice::DecodeRawBytes(enc, stored);
}

sluice_bytes Span(std::string_view v) {
  return sluice_bytes{reinterpret_cast<const uint8_t*>(v.data()), v.size()};
}

}  // namespace

namespace sluice::capi {

Result<std::string> EncodeGivenValue(const ColumnEncoding& enc, uint32_t kind,
                                     std::string_view value) {
  auto number = [&](auto v) -> Result<std::string> {
    if (value.size() != 8) {
      return InvalidArgumentError(DescribeColumn(enc) + ": a number is given in 8 bytes, got " +
                                  std::to_string(value.size()));
    }
    std::memcpy(&v, value.data(), 8);  // little-endian hosts only (the package's wheels)
    return EncodeMdsValue(enc, MdsValue(v));
  };
  switch (kind) {
    case SLUICE_VALUE_FIELD: return std::string(value);
    case SLUICE_VALUE_BYTES: return EncodeBytesValue(enc, value);
    case SLUICE_VALUE_INT64: return number(int64_t{0});
    case SLUICE_VALUE_UINT64: return number(uint64_t{0});
    case SLUICE_VALUE_DOUBLE: return number(double{0});
    default:
      return InvalidArgumentError(DescribeColumn(enc) + ": unknown value kind " +
                                  std::to_string(kind));
  }
}

}  // namespace sluice::capi

namespace {
}  // namespace

extern "C" {

sluice_status sluice_encode_int64(const char* encoding, int64_t value, uint8_t* buf, uint64_t cap,
                                  uint64_t* len) {
  return Guard("sluice_encode_int64", [&] {
    return EncodeScalar("sluice_encode_int64", encoding, value, buf, cap, len);
  });
}

sluice_status sluice_encode_uint64(const char* encoding, uint64_t value, uint8_t* buf,
                                   uint64_t cap, uint64_t* len) {
  return Guard("sluice_encode_uint64", [&] {
    return EncodeScalar("sluice_encode_uint64", encoding, value, buf, cap, len);
  });
}

sluice_status sluice_encode_double(const char* encoding, double value, uint8_t* buf, uint64_t cap,
                                   uint64_t* len) {
  return Guard("sluice_encode_double", [&] {
    return EncodeScalar("sluice_encode_double", encoding, value, buf, cap, len);
  });
}

sluice_status sluice_mds_field_layout(const char* encoding, sluice_ndarray* out) {
  constexpr const char* kFn = "sluice_mds_field_layout";
  return Guard(kFn, [&] {
    if (encoding == nullptr) return NullArgument(kFn, "encoding");
    if (out == nullptr) return NullArgument(kFn, "out");
    *out = sluice_ndarray{};
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    auto layout = sluice::ArrayLayoutOf(*enc);
    if (!layout) return SLUICE_OK;
    out->dtype = sluice::NdDtypeName(layout->dtype);
    out->ndim = static_cast<uint32_t>(layout->shape.size());  // <= kMaxNdim
    std::copy(layout->shape.begin(), layout->shape.end(), out->shape);
    return SLUICE_OK;
  });
}

sluice_status sluice_mds_field_form(const char* encoding, uint32_t* form) {
  constexpr const char* kFn = "sluice_mds_field_form";
  return Guard(kFn, [&] {
    if (encoding == nullptr) return NullArgument(kFn, "encoding");
    if (form == nullptr) return NullArgument(kFn, "form");
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    switch (sluice::ValueFormOf(*enc)) {
      case sluice::FieldValueForm::kValues: *form = SLUICE_MDS_FIELD_VALUES; break;
      case sluice::FieldValueForm::kText: *form = SLUICE_MDS_FIELD_TEXT; break;
      case sluice::FieldValueForm::kBytes: *form = SLUICE_MDS_FIELD_BYTES; break;
      case sluice::FieldValueForm::kFramed: *form = SLUICE_MDS_FIELD_FRAMED; break;
    }
    return SLUICE_OK;
  });
}

sluice_status sluice_mds_encode_value(const char* encoding, uint32_t kind, const uint8_t* value,
                                      uint64_t size, uint8_t* buf, uint64_t cap, uint64_t* len) {
  constexpr const char* kFn = "sluice_mds_encode_value";
  return Guard(kFn, [&] {
    if (sluice_status st = CheckOut(kFn, encoding, buf, cap, len); st != SLUICE_OK) return st;
    if (value == nullptr && size > 0) return NullArgument(kFn, "value");
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    return Emit(sluice::capi::EncodeGivenValue(*enc, kind, View({value, size})), buf, cap, len);
  });
}

sluice_status sluice_mds_decode_bytes(const char* encoding, const uint8_t* field, uint64_t size,
                                      sluice_bytes* out) {
  return DecodeField("sluice_mds_decode_bytes", encoding, field, size, out,
                     [&](const sluice::ColumnEncoding& enc, std::string_view stored) {
                       auto value = DecodeBytesValue(enc, stored);
                       if (!value.ok()) return Fail(value.status());
                       *out = Span(*value);
                       return SLUICE_OK;
                     });
}

sluice_status sluice_mds_encode_pil(const char* encoding, uint32_t width, uint32_t height,
                                    const char* mode, const uint8_t* pixels, uint64_t size,
                                    uint8_t* buf, uint64_t cap, uint64_t* len) {
  constexpr const char* kFn = "sluice_mds_encode_pil";
  return Guard(kFn, [&] {
    if (sluice_status st = CheckOut(kFn, encoding, buf, cap, len); st != SLUICE_OK) return st;
    if (mode == nullptr) return NullArgument(kFn, "mode");
    if (pixels == nullptr && size > 0) return NullArgument(kFn, "pixels");
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    return Emit(sluice::EncodePil(*enc, width, height, mode, View({pixels, size})), buf, cap, len);
  });
}

sluice_status sluice_mds_decode_pil(const char* encoding, const uint8_t* field, uint64_t size,
                                    sluice_mds_pil* out) {
  return DecodeField("sluice_mds_decode_pil", encoding, field, size, out,
                     [&](const sluice::ColumnEncoding& enc, std::string_view stored) {
                       auto image = sluice::DecodePil(enc, stored);
                       if (!image.ok()) return Fail(image.status());
                       *out = sluice_mds_pil{image->width, image->height, Span(image->mode),
                                             Span(image->pixels)};
                       return SLUICE_OK;
                     });
}

sluice_status sluice_mds_encode_list(const char* encoding, const sluice_bytes* items,
                                     uint32_t count, uint8_t* buf, uint64_t cap, uint64_t* len) {
  constexpr const char* kFn = "sluice_mds_encode_list";
  return Guard(kFn, [&] {
    if (sluice_status st = CheckOut(kFn, encoding, buf, cap, len); st != SLUICE_OK) return st;
    if (items == nullptr && count > 0) return NullArgument(kFn, "items");
    auto enc = ValueEncoding(encoding);
    if (!enc.ok()) return Fail(enc.status());
    std::vector<std::string_view> views;
    views.reserve(count);  // the caller's array: its own memory bounds it
    for (uint32_t i = 0; i < count; ++i) {
      if (items[i].data == nullptr && items[i].size > 0) return NullArgument(kFn, "items[i].data");
      views.push_back(View(items[i]));
    }
    return Emit(sluice::EncodeList(*enc, views), buf, cap, len);
  });
}

sluice_status sluice_mds_decode_list(const char* encoding, const uint8_t* field, uint64_t size,
                                     sluice_bytes* items, uint32_t cap, uint32_t* count) {
  constexpr const char* kFn = "sluice_mds_decode_list";
  return DecodeField(kFn, encoding, field, size, count,
                     [&](const sluice::ColumnEncoding& enc, std::string_view stored) {
                       if (items == nullptr && cap > 0) return NullArgument(kFn, "items");
                       auto list = sluice::DecodeList(enc, stored);
                       if (!list.ok()) return Fail(list.status());
                       *count = static_cast<uint32_t>(list->size());  // a u32 count in the field
                       if (list->size() > cap) {
                         return Fail(sluice::OutOfRangeError(
                             std::string(kFn) + ": the field holds " +
                             std::to_string(list->size()) + " items, the array has room for " +
                             std::to_string(cap)));
                       }
                       for (size_t i = 0; i < list->size(); ++i) items[i] = Span((*list)[i].bytes);
                       return SLUICE_OK;
                     });
}

}  // extern "C"

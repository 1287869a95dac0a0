// An MDS ndarray field's header, written and read by the engine
// (formats/mds EncodeNdArrayHeader, DecodeNdArray): sluice_decode_ndarray,
// sluice_mds_ndarray_decode, sluice_mds_ndarray_header.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/column_encoder.h"
#include "formats/mds/column_encoding.h"

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;
using sluice::capi::View;

// The column a sluice_ndarray describes, as sluice_mds_ndarray_encoding
// gives it: `dtype` NULL when each field stores its dtype, `ndim` 0 when each
// stores its shape. Checked by ParseColumnEncoding (a dtype-less shape as a
// one-byte dtype's, as the encoding string cannot name it).
sluice::Result<sluice::ColumnEncoding> NdArrayColumn(const char* fn, const sluice_ndarray& c) {
  if (c.ndim > SLUICE_MAX_NDIM) {
    return sluice::InvalidArgumentError(std::string(fn) + ": column of " +
                                        std::to_string(c.ndim) + " dimensions, expected 1 to 63");
  }
  std::string dims;
  for (uint32_t i = 0; i < c.ndim; ++i) dims += (i ? "," : "") + std::to_string(c.shape[i]);
  std::string name = "ndarray";
  if (c.dtype != nullptr || c.ndim > 0) name += std::string(":") + (c.dtype ? c.dtype : "uint8");
  if (c.ndim > 0) name += ":" + dims;
  SLUICE_ASSIGN_OR_RETURN(sluice::ColumnEncoding enc, sluice::ParseColumnEncoding(name, "(value)"));
  if (c.dtype == nullptr && c.ndim > 0) {  // the dtype is in each field
    enc.nd_dtype.reset();
    enc.fixed_size.reset();
    enc.name = "ndarray (shape " + dims + ")";
  }
  return enc;
}

sluice_status FillNdArray(const sluice::Result<sluice::NdArrayView>& a, sluice_ndarray* out) {
  if (!a.ok()) return Fail(a.status());
  *out = sluice_ndarray{};
  out->dtype = sluice::NdDtypeName(a->dtype);
  out->ndim = static_cast<uint32_t>(std::min<size_t>(a->shape.size(), SLUICE_MAX_NDIM));
  std::copy_n(a->shape.begin(), out->ndim, out->shape);
  out->data = sluice_bytes{reinterpret_cast<const uint8_t*>(a->data.data()), a->data.size()};
  return SLUICE_OK;
}

}  // namespace

extern "C" {

sluice_status sluice_decode_ndarray(const char* encoding, sluice_bytes field, sluice_ndarray* out) {
  return Guard("sluice_decode_ndarray", [&] {
    if (encoding == nullptr) return NullArgument("sluice_decode_ndarray", "encoding");
    if (out == nullptr) return NullArgument("sluice_decode_ndarray", "out");
    auto enc = sluice::ParseColumnEncoding(encoding, "(field)");
    if (!enc.ok()) return Fail(enc.status());
    return FillNdArray(sluice::DecodeNdArray(*enc, View(field)), out);
  });
}

sluice_status sluice_mds_ndarray_decode(const sluice_ndarray* column, const uint8_t* field,
                                        uint64_t size, sluice_ndarray* out) {
  constexpr const char* kFn = "sluice_mds_ndarray_decode";
  return Guard(kFn, [&] {
    if (column == nullptr) return NullArgument(kFn, "column");
    if (field == nullptr && size > 0) return NullArgument(kFn, "field");
    if (out == nullptr) return NullArgument(kFn, "out");
    auto enc = NdArrayColumn(kFn, *column);
    if (!enc.ok()) return Fail(enc.status());
    return FillNdArray(sluice::DecodeNdArray(*enc, View({field, size})), out);
  });
}

sluice_status sluice_mds_ndarray_header(const sluice_ndarray* column, const char* dtype,
                                        uint32_t ndim, const uint64_t* shape, uint8_t* buf,
                                        uint64_t cap, uint64_t* len) {
  constexpr const char* kFn = "sluice_mds_ndarray_header";
  return Guard(kFn, [&] {
    if (column == nullptr) return NullArgument(kFn, "column");
    if (dtype == nullptr) return NullArgument(kFn, "dtype");
    if (shape == nullptr && ndim > 0) return NullArgument(kFn, "shape");
    if (len == nullptr) return NullArgument(kFn, "len");
    if (buf == nullptr && cap > 0) return NullArgument(kFn, "buf");
    auto enc = NdArrayColumn(kFn, *column);
    if (!enc.ok()) return Fail(enc.status());
    std::optional<sluice::NdDtype> nd = sluice::NdDtypeFromName(dtype);
    if (!nd) {
      return Fail(sluice::InvalidArgumentError(std::string(kFn) + ": '" + dtype +
                                               "' is not an ndarray dtype"));
    }
    if (ndim > SLUICE_MAX_NDIM) {  // refused by the encoder too; bounds the copy
      return Fail(sluice::InvalidArgumentError(std::string(kFn) + ": array of " +
                                               std::to_string(ndim) +
                                               " dimensions, expected 1 to 63"));
    }
    auto header = sluice::EncodeNdArrayHeader(*enc, *nd, std::vector<uint64_t>(shape, shape + ndim));
    if (!header.ok()) return Fail(header.status());
    *len = header->size();
    if (header->size() > cap) {
      return Fail(sluice::OutOfRangeError(std::string(kFn) + ": the header needs " +
                                          std::to_string(header->size()) + " bytes, the buffer has " +
                                          std::to_string(cap)));
    }
    if (!header->empty()) std::memcpy(buf, header->data(), header->size());
    return SLUICE_OK;
  });
}

}  // extern "C"

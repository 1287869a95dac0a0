// Encoders of typed values into one MDS field's stored bytes, byte-identical
// to Mosaic's MDSWriter (see tests/data/mosaic/mds/README.md).
//
// Each function checks that the column's encoding takes that kind of value
// (else kInvalidArgument naming the column and encoding) and that the value
// fits (integers out of the type's range are rejected, where numpy would
// silently wrap). The result is the field's payload, without the u32 length
// word that MdsWriter adds for variable-size columns.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/json/py_json.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// int, int8..int64, uint8..uint64 (range-checked), str_int (decimal text),
// and float16/32/64/str_float (as Python would convert the int to float).
Result<std::string> EncodeInt64(const ColumnEncoding& enc, int64_t value);
Result<std::string> EncodeUInt64(const ColumnEncoding& enc, uint64_t value);

// float16 (numpy rounding, overflow -> inf), float32, float64, and
// str_float (Python repr, via PyFloatRepr).
Result<std::string> EncodeDouble(const ColumnEncoding& enc, double value);

// str (any valid UTF-8), str_int (Python str(int): optional '-', digits,
// no leading zeros, any size), str_decimal (str(Decimal): the text as given,
// which must be non-empty ASCII without spaces).
Result<std::string> EncodeText(const ColumnEncoding& enc, std::string_view text);

// json: json.dumps(value) (separators ", "/": ", ensure_ascii, key order
// kept as given).
Result<std::string> EncodeJson(const ColumnEncoding& enc, const JsonValue& value);

// bytes (the bytes), pkl (an already pickled object), jpeg and png (the
// file bytes).
Result<std::string> EncodeRawBytes(const ColumnEncoding& enc, std::string_view bytes);

// pil: u32 width, u32 height, u32 len(mode), mode, pixels. For the modes
// PilPixelBytes knows, `pixels` must have exactly that many bytes.
Result<std::string> EncodePil(const ColumnEncoding& enc, uint32_t width, uint32_t height,
                              std::string_view mode, std::string_view pixels);
// The same layout for one element of list[pil] (no column checks).
Result<std::string> EncodePilImage(uint32_t width, uint32_t height,
                                   std::string_view mode, std::string_view pixels);

// list[pil]/list[jpeg]/list[png]: u32 0, u32 count, lengths, items;
// jpeg_array/jpegarray: u32 count, lengths, items. Items are already
// encoded (EncodePilImage for list[pil], JPEG/PNG file bytes otherwise).
Result<std::string> EncodeList(const ColumnEncoding& enc,
                               const std::vector<std::string_view>& items);

// ndarray[:dtype[:shape]]: `data` is C-order little-endian values of
// `dtype`, exactly prod(shape) * itemsize bytes. When the encoding names a
// dtype or a shape, the value must have that dtype / shape. 1..63
// dimensions, none 0 (Mosaic refuses empty and 0-d arrays).
Result<std::string> EncodeNdArray(const ColumnEncoding& enc, NdDtype dtype,
                                  const std::vector<uint64_t>& shape,
                                  std::string_view data);

// The header EncodeNdArray writes before the values (Mosaic's): the dtype
// code unless the encoding names a dtype, then, unless it names a shape, a
// byte (ndim << 2 | word size code: 1, 2, 4 or 8 bytes, the smallest that
// holds the largest dimension) and the dimensions in that word size. The
// same checks as EncodeNdArray's, but not of the values. At most 506 bytes.
Result<std::string> EncodeNdArrayHeader(const ColumnEncoding& enc, NdDtype dtype,
                                        const std::vector<uint64_t>& shape);

}  // namespace sluice

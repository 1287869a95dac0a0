// Typed, zero-copy decoders of one MDS field's stored bytes.
//
// Every function takes the column's parsed encoding and the field's stored
// bytes (as returned by MdsShardReader) and checks that the encoding is one
// it handles (else kInvalidArgument: the caller asked for the wrong type)
// and that the bytes are well formed (else kCorrupt naming the column, the
// encoding, the offset inside the field and what was expected).
// Returned string_views point into `stored`: they stay valid as long as the
// bytes behind `stored` do. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// int, int8..int64 -> the value. uint8..uint32 are accepted too (they fit).
Result<int64_t> DecodeInt64(const ColumnEncoding& enc, std::string_view stored);

// uint8..uint64 -> the value. Signed kinds are rejected (use DecodeInt64).
Result<uint64_t> DecodeUInt64(const ColumnEncoding& enc, std::string_view stored);

// float16/float32/float64 widened exactly to double; str_float parsed as
// Python's float() parses repr output ("1e-07", "inf", "-inf", "nan").
Result<double> DecodeDouble(const ColumnEncoding& enc, std::string_view stored);

// str, str_int, str_float, str_decimal, json -> the UTF-8 text (validated;
// json text is not parsed here, see formats/json/py_json.h ParsePyJson).
Result<std::string_view> DecodeText(const ColumnEncoding& enc, std::string_view stored);

// bytes, pkl, jpeg, png -> the stored bytes themselves (pkl is a Python
// pickle that only Python can load; images are not decoded).
Result<std::string_view> DecodeRawBytes(const ColumnEncoding& enc, std::string_view stored);

// A raw PIL image: `pixels` is Pillow's tobytes() for `mode`.
struct PilImageView {
  uint32_t width = 0;
  uint32_t height = 0;
  std::string_view mode;    // ASCII, e.g. "RGB", "L", "1", "I;16"
  std::string_view pixels;  // exactly PilPixelBytes() bytes for known modes
};

// Bytes of tobytes() for a mode Sluice knows, or -1 for another mode (whose
// pixels are then everything after the header). Overflow-safe: returns -2
// when the size does not fit in 63 bits.
int64_t PilPixelBytes(std::string_view mode, uint64_t width, uint64_t height);

// pil -> header + pixels. For a known mode the stored pixels must be at
// least the mode's size (Pillow ignores extra bytes, and so does this).
// Also used for each item of list[pil] (pass the item bytes).
Result<PilImageView> DecodePilImage(std::string_view stored, std::string_view what);
Result<PilImageView> DecodePil(const ColumnEncoding& enc, std::string_view stored);

// One element of list[pil]/list[jpeg]/list[png]/jpeg_array.
struct ListItemView {
  uint32_t offset = 0;    // byte offset of the element inside the field
  uint32_t length = 0;
  std::string_view bytes; // the element's encoded bytes (PIL/JPEG/PNG)
};

// list[pil], list[jpeg], list[png] (u32 reserved, u32 count, lengths, data)
// and jpeg_array/jpegarray (u32 count, lengths, data). The count is bounded
// by the field size, so the vector cannot be made absurdly large. Trailing
// bytes after the last element are ignored, as Mosaic does. An empty
// jpeg_array decodes to no items (Mosaic's own decoder refuses it).
Result<std::vector<ListItemView>> DecodeList(const ColumnEncoding& enc,
                                             std::string_view stored);

// An ndarray: C-order little-endian values.
struct NdArrayView {
  NdDtype dtype = NdDtype::kUInt8;
  std::vector<uint64_t> shape;
  std::string_view data;  // element_count() * NdDtypeItemSize(dtype) bytes
  uint64_t element_count() const;
};

// ndarray[:dtype[:shape]] per the README's layout: dtype code and shape
// header only when the encoding does not name them; the data size must be
// exactly prod(shape) * itemsize.
Result<NdArrayView> DecodeNdArray(const ColumnEncoding& enc, std::string_view stored);

// Element i (< element_count()) converted to the requested type; floats are
// widened exactly; integers are converted with C++ rules (callers pick the
// accessor that matches NdDtypeIsFloat/NdDtypeIsSigned).
double NdElementAsDouble(const NdArrayView& a, uint64_t i);
int64_t NdElementAsInt64(const NdArrayView& a, uint64_t i);
uint64_t NdElementAsUInt64(const NdArrayView& a, uint64_t i);

}  // namespace sluice

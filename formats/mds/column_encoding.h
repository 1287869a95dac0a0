// MDS column encodings: the names Mosaic's MDSWriter accepts, parsed into a
// description of how a field is stored (fixed size or not, ndarray dtype and
// shape when the name carries them). See tests/data/mosaic/mds/README.md,
// "Column encodings" and "ndarray".
//
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

enum class EncodingKind {
  kBytes,
  kStr,
  kInt,  // int64 LE, named "int"
  kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64,
  kFloat16, kFloat32, kFloat64,
  kStrInt, kStrFloat, kStrDecimal,
  kJson,
  kPkl,
  kPil,
  kJpeg,
  kPng,
  kJpegArray,  // "jpeg_array" and its alias "jpegarray"
  kListPil, kListJpeg, kListPng,
  kNdarray,
};

// ndarray element types; the value is Mosaic's dtype code (8 * bytes, +1 for
// signed, +2 for float).
enum class NdDtype : uint8_t {
  kUInt8 = 8, kInt8 = 9,
  kUInt16 = 16, kInt16 = 17, kFloat16 = 18,
  kUInt32 = 32, kInt32 = 33, kFloat32 = 34,
  kUInt64 = 64, kInt64 = 65, kFloat64 = 66,
};

// The largest ndim Mosaic's ndarray header can express (6 bits).
inline constexpr unsigned kMaxNdim = 63;

// numpy's name: "uint8", ..., "float64".
const char* NdDtypeName(NdDtype dtype);
// Bytes per element: 1, 2, 4 or 8.
unsigned NdDtypeItemSize(NdDtype dtype);
bool NdDtypeIsFloat(NdDtype dtype);
bool NdDtypeIsSigned(NdDtype dtype);  // signed integer (not float)
// From a numpy name ("int16"); nullopt when it is not an ndarray dtype.
std::optional<NdDtype> NdDtypeFromName(std::string_view name);
// From a stored dtype code; nullopt when the code is unknown.
std::optional<NdDtype> NdDtypeFromCode(uint8_t code);

// One column's parsed encoding.
struct ColumnEncoding {
  std::string name;    // the encoding string as given, e.g. "ndarray:int16:2,2"
  std::string column;  // the column name, for error messages
  EncodingKind kind = EncodingKind::kBytes;
  // Stored size of every field when fixed (Mosaic's column_sizes entry);
  // unset = variable size (a u32 length in each sample's header).
  std::optional<uint64_t> fixed_size;
  // ndarray only: dtype and shape when the encoding string names them.
  std::optional<NdDtype> nd_dtype;
  std::optional<std::vector<uint64_t>> nd_shape;
  // A user's own encoding (CustomColumnEncoding): kind is kBytes.
  bool custom = false;
};

// "column 'x' (encoding)": how every error about one column names it;
// "int8 encoding" for a value of no column (`column` empty: a binding's
// encoder asked about one value).
std::string DescribeColumn(const ColumnEncoding& enc);

// The numpy layout of an encoding whose every field is one fixed-size
// little-endian numpy value: int (int64), int8..uint64, float16..float64
// (shape empty: a scalar) and ndarray naming both dtype and shape. nullopt
// for any other encoding (its fields vary or hold more than values).
struct FieldArrayLayout {
  NdDtype dtype = NdDtype::kUInt8;
  std::vector<uint64_t> shape;
};
std::optional<FieldArrayLayout> ArrayLayoutOf(const ColumnEncoding& enc);

// How a field holds its value, for a reader of many fields: one numpy
// value (ArrayLayoutOf); the whole field is the value's UTF-8 text (str,
// str_int, str_float, str_decimal, json: DecodeText gives the field); the
// whole field is the value's bytes (bytes, pkl, jpeg, png: DecodeRawBytes
// gives the field); else framed (pil, lists, ndarray with a header, a
// user's own): read with the decoder of its kind.
enum class FieldValueForm { kValues, kText, kBytes, kFramed };
FieldValueForm ValueFormOf(const ColumnEncoding& enc);

// Parses an encoding string for column `column`. Unknown names and malformed
// ndarray suffixes -> kUnimplemented naming the encoding and the column.
// An ndarray shape must have 1..63 positive dimensions whose total byte size
// fits in 32 bits (a sample cannot be larger than a shard).
Result<ColumnEncoding> ParseColumnEncoding(std::string_view encoding,
                                           std::string_view column);

// The column_sizes entry Mosaic writes for `encoding` (same rules as above).
Result<std::optional<uint64_t>> ColumnEncodingSize(std::string_view encoding);

// True for the names ParseColumnEncoding accepts.
bool IsMdsEncoding(std::string_view encoding);

// True for the encodings whose decoding runs code from the data ("pkl":
// unpickling), which Mosaic refuses unless allow_unsafe_types (its
// is_mds_encoding_safe compares the whole name). The one owner of that
// list and of Mosaic's text refusing one (UnsafeEncodingMessage: "Column x
// contains an unsafe type: pkl. To proceed anyway, set
// ``allow_unsafe_types=True``.", which users match).
bool IsUnsafeEncoding(std::string_view encoding);
std::string UnsafeEncodingMessage(std::string_view column, std::string_view encoding);

// The built-in encoding names, in a fixed order ("bytes", ..., "ndarray"):
// the names ParseColumnEncoding knows ("ndarray" also with ":dtype" and
// ":dtype:shape"). The one list: bindings read it (sluice_mds_encoding_names).
std::vector<std::string_view> BuiltinEncodingNames();

// The encodings a reader's caller decodes itself: a user's own, which
// Mosaic lets users register under new names. Readers hand their fields
// out as stored (CustomColumnEncoding); any other name that is not built in
// is refused when the dataset opens (CheckEncodingRegistered): it is a
// typo or a damaged index.json, and handing its bytes out would pass
// garbage off as data.
struct CustomEncodings {
  // Registered names. An encoding is registered when it equals one, or its
  // part before the first ':' does (Mosaic's registry is keyed by that
  // part; the rest configures the class).
  std::set<std::string, std::less<>> names;
  // Every name that is not built in is the caller's, which decides field by
  // field whether it can decode it (the Python package: Mosaic fails when a
  // sample of an unregistered encoding is decoded, not when it opens).
  bool any = false;

  bool Accepts(std::string_view encoding) const;
};

// Ok for built-in names (malformed ones too: ParseColumnEncoding judges
// those) and for names `custom` accepts. Else kUnimplemented "column 'x'
// has encoding 'jpge', which is neither built in nor registered".
Status CheckEncodingRegistered(std::string_view encoding, std::string_view column,
                               const CustomEncodings& custom);

// True when `encoding` may name a user's own encoding (Mosaic lets users
// register Encoding classes under new names): non-empty, and its part
// before any ':' is no built-in encoding's name (nor "ndarray").
bool IsCustomEncodingName(std::string_view encoding);

// A user's own encoding for column `column`: its fields are stored and
// handed out as the bytes given (kind kBytes, custom set); the binding that
// registered it encodes and decodes them. `size` is its column_sizes entry:
// every field's size (< 2^32), or nullopt when fields vary in size.
// kInvalidArgument for a name IsCustomEncodingName refuses or a size of
// 2^32 or more.
Result<ColumnEncoding> CustomColumnEncoding(std::string_view encoding, std::string_view column,
                                            std::optional<uint64_t> size);

}  // namespace sluice

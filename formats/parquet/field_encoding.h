// How a Parquet file's top-level field is handed out as a sample's field:
// its encoding name (what sluice_dataset_column_encoding and `sluice
// inspect` show) and what the field's bytes are. The one owner of the
// mapping from Parquet types to Sluice's column encodings.
//
// Names MDS already uses mean the same bytes as in MDS, so the C ABI's
// sluice_decode_int64 / _uint64 / _double read them:
//
//   encoding             Parquet column                     field bytes
//   int8 .. int64        INT32/INT64 (INTEGER / INT_n)      the little-endian value, narrowed
//   uint8 .. uint64      INT32/INT64 (unsigned)             to the name's width
//   float16              FIXED_LEN_BYTE_ARRAY(2) FLOAT16    2 bytes, IEEE half
//   float32, float64     FLOAT, DOUBLE                      4 / 8 bytes
//   str                  BYTE_ARRAY STRING / ENUM / JSON    the UTF-8 bytes
//   bytes                BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY   the bytes
//
// and names of Parquet's own types:
//
//   bool                 BOOLEAN                            1 byte, 0 or 1
//   date32               INT32 DATE                         int32 days since 1970-01-01
//   time32[ms]           INT32 TIME(MILLIS)                 int32
//   time64[us|ns]        INT64 TIME(MICROS|NANOS)           int64
//   timestamp[U]         INT64 TIMESTAMP(U, local)          int64 in unit U (ms, us, ns)
//   timestamp[U,UTC]     INT64 TIMESTAMP(U, adjusted to UTC)
//   timestamp[ns]        INT96 (legacy Impala/Spark)        int64 nanoseconds
//   decimal(p,s)         DECIMAL on any physical type       the value's text, as Python's
//                                                           str(Decimal): "123.45", "0E-10"
//   list<T>              a list whose elements are T, for   the elements' values packed
//                        T of a fixed width above           little-endian (T's width each;
//                        (ints, floats, bool, date, time,   INT96 as int64 nanoseconds)
//                        timestamp, INT96)
//   list<T>, otherwise   lists of str, bytes, decimals,     the value as JSON text (below)
//   (and list<list<..>>) and lists of lists
//
// JSON text (json.dumps-like, ASCII): integers exact, floats as Python's
// repr (NaN, Infinity), str as strings, bytes as {"hex": "..."}, decimals
// as their text in a string, null elements as null.
//
// A null value (a null row or a null list) is a field whose data pointer is
// null (size 0); an empty string or list has a non-null pointer and size 0.
//
// Null elements of a packed list (pyarrow, Spark and Hugging Face write
// list elements nullable; few rows hold a null one): the row's field keeps
// the form above, every element's `width` bytes, zero bytes where an
// element is null, and beside it the reader hands out a MaskedField: the
// field's view and its element validity, one byte per element, 1 = a
// value, 0 = null (Arrow's validity, a byte per flag). A row without a null
// element has no MaskedField, so its bytes and the cost of reading it are
// those of a column without nulls. The mask travels beside the fields
// (formats/dataset's SampleFields::masked, the C ABI's
// sluice_dataset_get_masked / sluice_stream_read_masks), never inside
// them; a reader that does not ask for the masks gets kUnimplemented for
// such a row (naming the file, row group, column and row) rather than
// zeros where the nulls are. Python gives such a list as a numpy masked
// array (masked where null; its .tolist() is the list with None that
// Hugging Face `datasets` gives), `sluice cat` as a JSON array with null.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/json/py_json.h"
#include "formats/parquet/schema.h"

namespace sluice::parquet {

enum class FieldBytes {
  kFixed,       // the leaf's fixed-width value, narrowed to `width` bytes
  kView,        // the BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY bytes
  kInt96Nanos,  // INT96 converted to int64 nanoseconds
  kDecimalText,
  kPackedList,  // list_depth 1 of a kFixed element: values packed, `width` each
  kJsonText,
};

// A packed list field that holds a null element (above): `field` is the
// field's view as handed out (its data pointer tells which field of a
// sample it is: the fields of one row never share one), `validity` one
// byte per element, 0 where the element is null.
struct MaskedField {
  std::string_view field;
  std::string_view validity;
};

struct FieldEncoding {
  std::string name;
  FieldBytes bytes = FieldBytes::kView;
  size_t width = 0;  // kFixed, kPackedList: bytes per value
};

// The encoding of top-level field `field`. kUnimplemented (ReadableField's
// error, naming `file` and the column) for a field the reader cannot read.
Result<FieldEncoding> FieldEncodingOf(const Schema& schema, size_t field, std::string_view file);

// How FieldValueJson gives a float: its repr as text (`sluice cat`, as for
// MDS, so that no digit is lost to a reader), or a JSON number (a document
// to store, as `sluice convert` writes a json column).
enum class FloatForm { kReprText, kNumber };

// A field's bytes (as the table above says for `encoding`) as a JSON value
// for `sluice cat`: numbers, true/false, text, arrays for lists; null for a
// null field (data == nullptr). Member name and value, e.g. {"value", 3},
// {"value_repr", "1.5"} for floats (as for MDS), {"value_str", "1.50"} for
// decimals; bytes: no member (the caller shows raw_hex). kCorrupt when the
// bytes do not fit the encoding, kUnimplemented for an unknown name.
Result<std::vector<std::pair<std::string, JsonValue>>> FieldValueJson(
    std::string_view encoding, std::string_view bytes, FloatForm floats = FloatForm::kReprText);
// A packed list's value with its element validity (MaskedField): null where
// validity is 0. kCorrupt when the validity does not hold one byte per
// element; kInvalidArgument for an encoding that is no packed list.
Result<std::vector<std::pair<std::string, JsonValue>>> MaskedFieldValueJson(
    std::string_view encoding, std::string_view bytes, std::string_view validity,
    FloatForm floats = FloatForm::kReprText);

// The encoding of one value of `leaf` (a list's element, or the field
// itself when it is no list): one of the scalar rows of the table.
FieldEncoding LeafValueEncoding(const LeafColumn& leaf);

// True for an encoding this file names (scalar, list or nested).
bool IsParquetFieldEncoding(std::string_view encoding);

// The MDS encoding a converted column takes (`sluice convert`), where the
// field's bytes mean the same or are what Mosaic's writers store:
//   MDS's own scalar names, str, bytes    the same name, the same bytes
//   bool                                  uint8 (the byte 0/1)
//   date32, time32[ms]                    int32 (the day / ms count)
//   time64[..], timestamp[..]             int64 (the count in the name's unit)
//   decimal(p,s)                          str_decimal (the text)
//   list<T>, packed                       ndarray:<T's dtype> (bool: uint8;
//                                         date/time/timestamp: int32/int64), one
//                                         dimension, as Mosaic stores a 1-d array
//   other lists (JSON text)               json
// kUnimplemented for an unknown name.
Result<std::string> MdsEncodingOf(std::string_view encoding);

}  // namespace sluice::parquet

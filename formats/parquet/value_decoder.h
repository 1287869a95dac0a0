// A data page's values section into the values of its present (non-null)
// leaf slots, for every encoding a column of that physical type may use,
// through the decoders of formats/parquet/encoding; and a dictionary page
// into a Dictionary.
//
//   PLAIN                    every type
//   RLE                      BOOLEAN (4-byte length, then runs of 1 bit)
//   RLE_DICTIONARY,          every type but BOOLEAN, with the chunk's
//   PLAIN_DICTIONARY         dictionary; an index past it is an error
//   DELTA_BINARY_PACKED      INT32, INT64
//   DELTA_LENGTH_BYTE_ARRAY  BYTE_ARRAY
//   DELTA_BYTE_ARRAY         BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY
//   BYTE_STREAM_SPLIT        FLOAT, DOUBLE, INT32, INT64, FIXED_LEN_BYTE_ARRAY
// Anything else is kUnimplemented naming the encoding and the type.
// Errors are the decoders' own (kCorrupt "<ENCODING> at offset <n>: ...");
// the caller prepends the page. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/column_buffer.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/schema.h"

namespace sluice::parquet {

// Bytes per value in a ColumnBuffer's `fixed` (column_buffer.h); 0 for
// BYTE_ARRAY.
size_t FixedWidth(const LeafColumn& leaf);

// A column chunk's dictionary; views into the dictionary page's body.
struct Dictionary {
  size_t count = 0;
  std::string_view fixed;                // count * width bytes
  std::vector<std::string_view> binary;  // BYTE_ARRAY
};

// The PLAIN values of a dictionary page of `count` entries. `count` is
// checked against the body's size before anything is allocated.
Result<Dictionary> DecodeDictionaryPage(std::string_view body, size_t count,
                                        const LeafColumn& leaf);

// `n` values of `width` = FixedWidth(leaf) bytes into out[0 .. n*width).
// `scratch` (optional) holds dictionary indices, reused across calls (and
// its storage across row groups: SlotArray).
Status DecodeFixedValues(Encoding encoding, std::string_view section, size_t n,
                         const LeafColumn& leaf, const Dictionary* dictionary, uint8_t* out,
                         SlotArray<uint32_t>* scratch = nullptr);

// `n` BYTE_ARRAY values as views into `section` or the dictionary, except
// DELTA_BYTE_ARRAY's, which are rebuilt into a buffer appended to `owned`
// (at most `max_bytes` of them).
Status DecodeBinaryValues(Encoding encoding, std::string_view section, size_t n,
                          const Dictionary* dictionary, uint64_t max_bytes,
                          std::vector<std::unique_ptr<std::string>>* owned,
                          std::string_view* out, SlotArray<uint32_t>* scratch = nullptr);

}  // namespace sluice::parquet

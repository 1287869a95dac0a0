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
#include "formats/parquet/encoding/rle_bit_packed.h"
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

// A data page's dictionary-encoded fixed-width values (RLE_DICTIONARY or
// PLAIN_DICTIONARY, not BOOLEAN) decoded a run at a time, each index
// checked against the dictionary: what DecodeFixedValues does for the whole
// page, for a caller that decodes a page only as far as its rows are read
// (ColumnChunkCursor). The same errors as DecodeFixedValues, a bad index
// named by its place in the page. `section` and `dictionary` must outlive it.
// Also a BYTE_ARRAY page's indices (NextIndices), for a caller that takes
// the values from a dictionary it decodes as far as they index.
class DictionaryFixedValues {
 public:
  static Result<DictionaryFixedValues> Create(Encoding encoding, std::string_view section,
                                              const LeafColumn& leaf, const Dictionary* dictionary);
  // The next `n` values into out[0 .. n*width); `scratch` holds the indices.
  Status Next(size_t n, uint8_t* out, SlotArray<uint32_t>* scratch);
  // The next `n` indices alone into *out, each checked against the
  // dictionary's count.
  Status NextIndices(size_t n, SlotArray<uint32_t>* out);

 private:
  DictionaryFixedValues(Encoding encoding, RleBitPackedDecoder indices, const Dictionary* dictionary,
                        size_t width)
      : encoding_(encoding), indices_(std::move(indices)), dictionary_(dictionary), width_(width) {}
  Encoding encoding_;
  RleBitPackedDecoder indices_;
  const Dictionary* dictionary_;
  size_t width_;
  uint64_t done_ = 0;  // values decoded before the next call
};

// `n` BYTE_ARRAY values as views into `section` or the dictionary, except
// DELTA_BYTE_ARRAY's, which are rebuilt into a buffer appended to `owned`
// (at most `max_bytes` of them).
Status DecodeBinaryValues(Encoding encoding, std::string_view section, size_t n,
                          const Dictionary* dictionary, uint64_t max_bytes,
                          std::vector<std::unique_ptr<std::string>>* owned,
                          std::string_view* out, SlotArray<uint32_t>* scratch = nullptr);

}  // namespace sluice::parquet

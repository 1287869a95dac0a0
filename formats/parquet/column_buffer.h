// One top-level field of one row group, decoded: Arrow's layout with a
// byte per validity flag.
//
//   lists[k]   for a field of list_depth L, k = 0 .. L-1: the slots of list
//              level k (k = 0: one per row). Slot i of level k is null when
//              validity[i] == 0, else holds offsets[i] .. offsets[i+1] of
//              the next level's slots (the leaf's slots after the last).
//   leaf slots one per value position (a row for a primitive field, a list
//              element otherwise): validity[i] (0 = null), and the value:
//                fixed-width types: fixed[i*width .. (i+1)*width): BOOLEAN as
//                one byte 0/1, INT32/FLOAT 4 bytes, INT64/DOUBLE 8, INT96
//                its 12 stored bytes, FIXED_LEN_BYTE_ARRAY its type_length;
//                little-endian; zeros for nulls;
//                BYTE_ARRAY: binary[i] ("" for nulls).
//
// `binary` views point into buffers the ColumnBuffer owns (decompressed
// pages, the dictionary page, DELTA_BYTE_ARRAY's rebuilt values) or into
// the column chunk's bytes that the decoder was given (PLAIN and
// DELTA_LENGTH_BYTE_ARRAY values of pages stored uncompressed: no copy): they
// live as long as the buffer and those bytes. Movable (views stay valid:
// owned storage is heap-allocated and never moved); not thread-safe for
// writing, safe to read from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/parquet/schema.h"

namespace sluice::parquet {

struct ListSlots {
  std::vector<int64_t> offsets{0};  // size() + 1 entries
  std::vector<uint8_t> validity;    // one per slot
  size_t size() const { return validity.size(); }
};

struct ColumnBuffer {
  LeafColumn leaf;
  size_t list_depth = 0;
  size_t num_rows = 0;
  std::vector<ListSlots> lists;

  std::vector<uint8_t> validity;  // one per leaf slot
  size_t null_count = 0;          // leaf slots that are null
  size_t width = 0;               // fixed-width bytes per slot; 0 for BYTE_ARRAY
  std::string fixed;
  std::vector<std::string_view> binary;

  size_t leaf_slots() const { return validity.size(); }
  std::string_view fixed_value(size_t slot) const {
    return std::string_view(fixed).substr(slot * width, width);
  }

  // Storage the views point into: buffers of its own, and the bytes the
  // chunk was read into when the reader owns them (row_group_reader.h).
  std::vector<std::unique_ptr<std::string>> owned;
  std::shared_ptr<const std::string> source;
};

}  // namespace sluice::parquet

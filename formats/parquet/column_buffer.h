// One top-level field of one row group, decoded: Arrow's layout with a
// byte per validity flag.
//
//   lists[k]   for a field of list_depth L, k = 0 .. L-1: the slots of list
//              level k (k = 0: one per row). Slot i of level k is null when
//              validity[i] == 0, else holds offsets[i] .. offsets[i+1] of
//              the next level's slots (the leaf's slots after the last).
//   leaf slots one per value position (a row for a primitive field, a list
//              element otherwise): validity[i] (0 = null), and the value:
//                fixed-width types: fixed_value(i), `width` bytes: BOOLEAN as
//                one byte 0/1, INT32/FLOAT 4 bytes, INT64/DOUBLE 8, INT96
//                its 12 stored bytes, FIXED_LEN_BYTE_ARRAY its type_length;
//                little-endian; zeros for nulls. Stored as runs, one per
//                data page: the values of slots first_slot .. back to back;
//                BYTE_ARRAY: binary[i] ("" for nulls).
//
// Views: a PLAIN page of fixed-width values without nulls is a run that
// points into the page (no copy), and PLAIN and DELTA_LENGTH_BYTE_ARRAY
// byte arrays point into their page; other values are decoded into buffers
// the ColumnBuffer owns (as are decompressed pages, the dictionary page and
// DELTA_BYTE_ARRAY's rebuilt values; decompressed pages and decoded
// fixed-width values are mostly in one buffer each per chunk, `pages` and
// `values`). Pages stored uncompressed are viewed
// in the column chunk's bytes that the decoder was given: they must live as
// long as the buffer (ReadRowGroup makes the buffer own them: `source`).
// Movable (views stay valid: owned storage is heap-allocated and never
// moved); not thread-safe for writing, safe to read from several threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/uninitialized_buffer.h"
#include "formats/parquet/encoding/deferred_gathers.h"
#include "formats/parquet/schema.h"

namespace sluice::parquet {

// An array of one entry per leaf slot, made afresh for each row group: its
// storage recycled from one row group to the next when large
// (base/uninitialized_buffer.h RecyclingAllocator), not faulted in anew.
template <class T>
using SlotArray = std::vector<T, RecyclingAllocator<T>>;

struct ListSlots {
  SlotArray<int64_t> offsets{0};  // size() + 1 entries
  SlotArray<uint8_t> validity;    // one per slot
  size_t size() const { return validity.size(); }
};

// Fixed-width values of consecutive slots, back to back.
struct FixedRun {
  size_t first_slot = 0;
  std::string_view bytes;  // width bytes per slot
};

struct ColumnBuffer {
  LeafColumn leaf;
  size_t list_depth = 0;
  size_t num_rows = 0;
  std::vector<ListSlots> lists;

  SlotArray<uint8_t> validity;  // one per leaf slot
  size_t null_count = 0;          // leaf slots that are null
  size_t width = 0;               // fixed-width bytes per slot; 0 for BYTE_ARRAY
  std::vector<FixedRun> fixed_runs;  // by first_slot, covering every slot
  SlotArray<std::string_view> binary;

  size_t leaf_slots() const { return validity.size(); }
  // The value of a fixed-width slot (< leaf_slots()): a binary search of the
  // runs, so walk fixed_runs when reading every value.
  std::string_view fixed_value(size_t slot) const {
    auto it = std::upper_bound(fixed_runs.begin(), fixed_runs.end(), slot,
                               [](size_t s, const FixedRun& r) { return s < r.first_slot; });
    const FixedRun& run = *(it - 1);
    return run.bytes.substr((slot - run.first_slot) * width, width);
  }

  // Storage the views point into: buffers of its own, and the bytes the
  // chunk was read into when the reader owns them (row_group_reader.h).
  std::vector<std::unique_ptr<std::string>> owned;
  UninitializedBuffer pages;   // the chunk's decompressed pages (page_reader.h)
  UninitializedBuffer values;  // most decoded fixed-width values
  // Large byte-array values whose bytes are copied into `pages` only when
  // read (ColumnDecodeOptions::defer_large_gathers; empty otherwise): call
  // deferred.Ensure(binary[i]) before reading binary[i]'s bytes.
  DeferredGathers deferred;
  std::shared_ptr<const std::string> source;

  // The bytes the buffer holds of its own: decoded values, decompressed
  // pages, levels and views; not the chunk's bytes it views, nor `source`
  // (the reader that read those bytes counts them). What a reader's
  // row-group budget counts (ColumnDecodeOptions::max_row_group_bytes).
  uint64_t HeldBytes() const {
    uint64_t n = pages.size() + values.size() + validity.capacity() +
                 binary.capacity() * sizeof(std::string_view) + fixed_runs.capacity() * sizeof(FixedRun) + deferred.HeldBytes();
    for (const ListSlots& l : lists) n += l.offsets.capacity() * sizeof(int64_t) + l.validity.capacity();
    for (const auto& o : owned) n += o->capacity();
    return n;
  }
};

}  // namespace sluice::parquet

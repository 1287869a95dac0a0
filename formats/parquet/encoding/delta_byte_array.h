// DELTA_BYTE_ARRAY (incremental or front coding) for BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY columns: each value's length of prefix shared with
// the previous value as a DELTA_BINARY_PACKED (INT32) stream, then the
// suffixes as DELTA_LENGTH_BYTE_ARRAY. Value i = the first prefix[i] bytes
// of value i - 1, then suffix i.
//
// Values are rebuilt, so the output owns its bytes (OwnedByteArrays). A
// page can describe far more output than its size (every value repeating a
// long predecessor costs a few bits), so the decoder takes a budget of
// output bytes from the caller and fails before exceeding it. Checks: the
// two streams' totals agree; prefix[0] is 0, every prefix is at most the
// previous value's length, and lengths are not negative; with a fixed
// width (FIXED_LEN_BYTE_ARRAY), every value has exactly that length.
//
// Not thread-safe; the section must outlive the decoder (the decoder keeps
// a copy of the last value it produced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/encoding/delta_binary_packed.h"
#include "formats/parquet/encoding/delta_length_byte_array.h"

namespace sluice::parquet {

// Byte arrays that own their bytes: value i is bytes[offsets[i],
// offsets[i + 1]). `offsets` starts as {0} and gains one entry per value.
struct OwnedByteArrays {
  std::string bytes;
  std::vector<uint64_t> offsets{0};

  size_t size() const { return offsets.size() - 1; }
  // Valid until the next value is appended.
  std::string_view operator[](size_t i) const {
    return std::string_view(bytes).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

class DeltaByteArrayDecoder {
 public:
  // Over `section` (prefix lengths, then the suffixes, to its end). At most
  // `max_output_bytes` bytes of values in all calls together (the caller's
  // budget: e.g. what its column buffer may hold). `fixed_width` > 0: every
  // value must be that long (FIXED_LEN_BYTE_ARRAY); 0: any length.
  static Result<DeltaByteArrayDecoder> Create(std::string_view section, uint64_t max_output_bytes,
                                              size_t fixed_width = 0);

  uint64_t total_count() const { return prefixes_.total_count(); }
  uint64_t values_left() const { return prefixes_.values_left(); }

  // Appends the next `count` values to `out`. Errors (kCorrupt, naming the
  // value's index and offset): `count` above values_left(), a prefix longer
  // than the previous value, a wrong fixed width, the budget exceeded
  // ("value <i> would bring the output to <n> bytes; expected at most
  // <max>"). After an error the decoder must not be used again; `out` may
  // hold some of the values.
  Status Decode(size_t count, OwnedByteArrays* out);

 private:
  DeltaByteArrayDecoder(const char* section, DeltaBinaryPackedDecoder<int32_t> prefixes,
                        DeltaLengthByteArrayDecoder suffixes, uint64_t max_output_bytes,
                        size_t fixed_width)
      : section_(section),
        prefixes_(std::move(prefixes)),
        suffixes_(std::move(suffixes)),
        max_output_(max_output_bytes),
        fixed_width_(fixed_width) {}

  const char* section_;  // for error offsets
  DeltaBinaryPackedDecoder<int32_t> prefixes_;
  DeltaLengthByteArrayDecoder suffixes_;
  uint64_t max_output_;
  size_t fixed_width_;
  uint64_t produced_ = 0;  // bytes of values produced so far
  std::string previous_;
};

}  // namespace sluice::parquet

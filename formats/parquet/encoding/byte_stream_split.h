// BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY
// of any width: for N values of K bytes, K streams of N bytes, stream k
// holding byte k of every value. There is no header: the section is exactly
// K * N bytes, so N comes from its size.
//
// Decode writes values back in their little-endian layout, K bytes each,
// into the caller's buffer. Not thread-safe (a cursor); the section must
// outlive the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sluice::parquet {

class ByteStreamSplitDecoder {
 public:
  // `width` is K: 4 (FLOAT, INT32), 8 (DOUBLE, INT64) or the
  // FIXED_LEN_BYTE_ARRAY's length. Errors: width 0, or a section that is not
  // a whole number of values.
  static Result<ByteStreamSplitDecoder> Create(std::string_view section, size_t width);

  size_t value_count() const { return count_; }  // N
  size_t values_left() const { return count_ - next_; }

  // The next `count` values into out[0 .. count * width). Errors: `count`
  // above values_left().
  Status Decode(size_t count, uint8_t* out);
  Status DecodeFloat(size_t count, float* out) { return Typed(count, 4, out); }
  Status DecodeDouble(size_t count, double* out) { return Typed(count, 8, out); }
  Status DecodeInt32(size_t count, int32_t* out) { return Typed(count, 4, out); }
  Status DecodeInt64(size_t count, int64_t* out) { return Typed(count, 8, out); }

 private:
  ByteStreamSplitDecoder(const uint8_t* data, size_t width, size_t count)
      : data_(data), width_(width), count_(count) {}
  // The typed calls check that the column's width is the type's.
  Status Typed(size_t count, size_t type_width, void* out);

  const uint8_t* data_;
  size_t width_;
  size_t count_;
  size_t next_ = 0;
};

}  // namespace sluice::parquet

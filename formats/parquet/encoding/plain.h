// PLAIN, for every physical type: values back to back, little-endian.
//   BOOLEAN               bit-packed, LSB first, 1 bit per value
//   INT32, FLOAT          4 bytes        INT64, DOUBLE   8 bytes
//   INT96                 12 bytes (8 bytes of nanoseconds in the day, then
//                         a 4-byte Julian day, as Impala and Spark write it)
//   BYTE_ARRAY            a 4-byte length (at most 2^31 - 1), then the bytes
//   FIXED_LEN_BYTE_ARRAY  the type's length in bytes, no prefix
// Also the format of dictionary pages.
//
// A PlainDecoder is a cursor over one page's values section: each call
// takes the next `count` values of the type the caller knows the column
// has, after checking that their bytes exist. Views (byte arrays, fixed
// widths) point into the section: they stay valid as long as its bytes do,
// with no copy. Not thread-safe; the section must outlive the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {

// A PLAIN INT96 value as stored: the low 8 bytes and the high 4.
struct Int96 {
  uint64_t nanos_of_day;  // bytes 0-7
  uint32_t julian_day;    // bytes 8-11
};

// An INT96 timestamp as nanoseconds since the Unix epoch (Julian day
// 2,440,588), as pyarrow reads it; out-of-range days wrap around in 64 bits
// rather than fail, as in pyarrow.
int64_t Int96ToUnixNanos(const Int96& v);

class PlainDecoder {
 public:
  explicit PlainDecoder(std::string_view section, std::string_view encoding = "PLAIN")
      : in_(section, encoding) {}

  // Booleans as 0/1 bytes. Boolean calls continue bit by bit; a later
  // call of another kind starts at the next whole byte.
  Status DecodeBooleans(size_t count, uint8_t* out);
  Status DecodeInt32(size_t count, int32_t* out) { return Copy(count, 4, out); }
  Status DecodeInt64(size_t count, int64_t* out) { return Copy(count, 8, out); }
  Status DecodeFloat(size_t count, float* out) { return Copy(count, 4, out); }
  Status DecodeDouble(size_t count, double* out) { return Copy(count, 8, out); }
  Status DecodeInt96(size_t count, Int96* out);

  // The next `count` values of `width` bytes each as one view of
  // count * width bytes (fixed-width values handed out without a copy).
  // Errors: width 0, or fewer bytes left.
  Status TakeFixedWidth(size_t count, size_t width, std::string_view* bytes);
  // FIXED_LEN_BYTE_ARRAY values of `width` bytes as one view each.
  Status DecodeFixedLenByteArrays(size_t count, size_t width, std::string_view* out);
  // BYTE_ARRAY values as views of their bytes. Errors name the value's
  // index within this call and the offset of its length.
  Status DecodeByteArrays(size_t count, std::string_view* out);

  size_t remaining() const { return in_.remaining(); }  // whole bytes not yet read
  uint64_t offset() const { return in_.offset(); }

 private:
  Status Copy(size_t count, size_t width, void* out);
  void EndBits();

  SectionReader in_;
  unsigned bit_ = 0;  // booleans: bits of the current byte already read
};

// The BYTE_ARRAY values of several PLAIN sections (one per page), found
// together: `count` values from the start of `section` into `out`, as
// PlainDecoder::DecodeByteArrays would. Each length is found only by
// reading the one before it, a cache miss per value when values are a KiB
// or more; walking several sections in turn keeps several of those misses
// in flight instead of one. Returns the index of the first section whose
// values are not all there (its `out` is then partly written: decode it
// with DecodeByteArrays for the error), or sections.size() when all are.
struct ByteArraySection {
  std::string_view section;
  size_t count = 0;
  std::string_view* out = nullptr;
};
size_t FindByteArrays(std::span<const ByteArraySection> sections);

}  // namespace sluice::parquet

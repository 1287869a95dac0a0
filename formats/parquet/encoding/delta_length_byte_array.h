// DELTA_LENGTH_BYTE_ARRAY for BYTE_ARRAY columns: every value's length as
// one DELTA_BINARY_PACKED (INT32) stream, then all the values' bytes back
// to back. Also the suffixes inside DELTA_BYTE_ARRAY.
//
// Create walks the length stream's block headers to find where the bytes
// begin (no allocation, time in proportion to the stream's size); Decode
// then hands out views of the next values. Checks: each length is 0 or
// more and lies inside the bytes left; the caller's count is at most the
// stream's total. Views point into the section: valid as long as its bytes
// are. Not thread-safe; the section must outlive the decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/encoding/delta_binary_packed.h"
#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {

class DeltaLengthByteArrayDecoder {
 public:
  // Over `section` (the lengths, then the bytes, to its end). `encoding` and
  // `base_offset` as for the other decoders (DELTA_BYTE_ARRAY's suffixes
  // start inside its section).
  static Result<DeltaLengthByteArrayDecoder> Create(
      std::string_view section, std::string_view encoding = "DELTA_LENGTH_BYTE_ARRAY",
      uint64_t base_offset = 0);

  uint64_t total_count() const { return lengths_.total_count(); }
  uint64_t values_left() const { return lengths_.values_left(); }
  // Bytes of values not yet handed out (0 once a page's values are all read,
  // for a well-formed page).
  size_t bytes_left() const { return bytes_.remaining(); }

  // The next `count` values as views. Errors: `count` above values_left(),
  // a negative length or one past the bytes left (naming the value's index
  // in the stream and the offset of its bytes). After an error the decoder
  // must not be used again.
  Status Decode(size_t count, std::string_view* out);

 private:
  DeltaLengthByteArrayDecoder(DeltaBinaryPackedDecoder<int32_t> lengths, SectionReader bytes)
      : lengths_(std::move(lengths)), bytes_(bytes) {}

  DeltaBinaryPackedDecoder<int32_t> lengths_;
  SectionReader bytes_;
};

}  // namespace sluice::parquet

#include "formats/parquet/encoding/delta_length_byte_array.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice::parquet {

Result<DeltaLengthByteArrayDecoder> DeltaLengthByteArrayDecoder::Create(
    std::string_view section, std::string_view encoding, uint64_t base_offset) {
  SLUICE_ASSIGN_OR_RETURN(auto lengths,
                          DeltaBinaryPackedDecoder<int32_t>::Create(section, encoding, base_offset));
  SLUICE_ASSIGN_OR_RETURN(const size_t lengths_size, lengths.EncodedSize());
  SectionReader bytes(section.substr(lengths_size), encoding, base_offset + lengths_size);
  return DeltaLengthByteArrayDecoder(std::move(lengths), bytes);
}

Status DeltaLengthByteArrayDecoder::Decode(size_t count, std::string_view* out) {
  if (count > values_left()) {
    return bytes_.Error("expected " + std::to_string(count) + " values, found " +
                        std::to_string(values_left()) + " (the length stream's total is " +
                        std::to_string(total_count()) + ")");
  }
  int32_t lengths[256];
  size_t i = 0;
  while (i < count) {
    const size_t n = std::min<size_t>(count - i, std::size(lengths));
    const uint64_t first_index = total_count() - values_left();
    SLUICE_RETURN_IF_ERROR(lengths_.Decode(n, lengths));
    for (size_t k = 0; k < n; ++k) {
      const int32_t length = lengths[k];
      if (length < 0 || static_cast<uint32_t>(length) > bytes_.remaining()) {
        return bytes_.Error("value " + std::to_string(first_index + k) + " has length " +
                            std::to_string(length) + "; expected 0 to the " +
                            std::to_string(bytes_.remaining()) + " bytes left");
      }
      out[i + k] = bytes_.rest().substr(0, static_cast<size_t>(length));
      bytes_.Skip(static_cast<size_t>(length));
    }
    i += n;
  }
  return Status::Ok();
}

}  // namespace sluice::parquet

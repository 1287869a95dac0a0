#include "formats/parquet/encoding/delta_byte_array.h"

#include <algorithm>
#include <string>
#include <utility>

namespace sluice::parquet {
namespace {

constexpr std::string_view kDeltaByteArray = "DELTA_BYTE_ARRAY";

}  // namespace

Result<DeltaByteArrayDecoder> DeltaByteArrayDecoder::Create(std::string_view section,
                                                            uint64_t max_output_bytes,
                                                            size_t fixed_width) {
  SLUICE_ASSIGN_OR_RETURN(auto prefixes,
                          DeltaBinaryPackedDecoder<int32_t>::Create(section, kDeltaByteArray));
  SLUICE_ASSIGN_OR_RETURN(const size_t prefixes_size, prefixes.EncodedSize());
  SLUICE_ASSIGN_OR_RETURN(
      auto suffixes,
      DeltaLengthByteArrayDecoder::Create(section.substr(prefixes_size), kDeltaByteArray, prefixes_size));
  if (suffixes.total_count() != prefixes.total_count()) {
    return EncodingError(kDeltaByteArray, prefixes_size,
                         "the suffixes count " + std::to_string(suffixes.total_count()) +
                             " values; expected the prefix lengths' " +
                             std::to_string(prefixes.total_count()));
  }
  return DeltaByteArrayDecoder(section.data(), std::move(prefixes), std::move(suffixes),
                               max_output_bytes, fixed_width);
}

Status DeltaByteArrayDecoder::Decode(size_t count, OwnedByteArrays* out) {
  if (count > values_left()) {
    return EncodingError(kDeltaByteArray, 0,
                         "expected " + std::to_string(count) + " values, found " +
                             std::to_string(values_left()) + " (the prefix lengths' total is " +
                             std::to_string(total_count()) + ")");
  }
  int32_t prefix[256];
  std::string_view suffix[256];
  size_t i = 0;
  while (i < count) {
    const size_t n = std::min<size_t>(count - i, std::size(prefix));
    const uint64_t first_index = total_count() - values_left();
    SLUICE_RETURN_IF_ERROR(prefixes_.Decode(n, prefix));
    SLUICE_RETURN_IF_ERROR(suffixes_.Decode(n, suffix));
    for (size_t k = 0; k < n; ++k) {
      const uint64_t index = first_index + k;
      // Errors point at the value's suffix bytes.
      const uint64_t at = static_cast<uint64_t>(suffix[k].data() - section_);
      if (prefix[k] < 0 || static_cast<size_t>(prefix[k]) > previous_.size()) {
        return EncodingError(kDeltaByteArray, at,
                             "value " + std::to_string(index) + " has prefix length " +
                                 std::to_string(prefix[k]) + "; expected 0 to the previous " +
                                 "value's " + std::to_string(previous_.size()) + " bytes");
      }
      const uint64_t size = static_cast<uint64_t>(prefix[k]) + suffix[k].size();
      if (fixed_width_ != 0 && size != fixed_width_) {
        return EncodingError(kDeltaByteArray, at,
                             "value " + std::to_string(index) + " has " + std::to_string(size) +
                                 " bytes; expected the fixed width " +
                                 std::to_string(fixed_width_));
      }
      if (size > max_output_ - produced_) {
        return EncodingError(kDeltaByteArray, at,
                             "value " + std::to_string(index) + " would bring the output to " +
                                 std::to_string(produced_ + size) + " bytes; expected at most " +
                                 std::to_string(max_output_));
      }
      previous_.resize(static_cast<size_t>(prefix[k]));
      previous_.append(suffix[k]);
      out->bytes.append(previous_);
      out->offsets.push_back(out->bytes.size());
      produced_ += size;
    }
    i += n;
  }
  return Status::Ok();
}

}  // namespace sluice::parquet

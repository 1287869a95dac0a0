#include "formats/parquet/encoding/byte_stream_split.h"

#include <string>

#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {
namespace {

constexpr std::string_view kByteStreamSplit = "BYTE_STREAM_SPLIT";

// Value i's byte k is streams[k * n + i]; a compile-time width lets the
// compiler unroll the gather.
template <size_t W>
void Gather(const uint8_t* streams, size_t n, size_t first, size_t count, uint8_t* out) {
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < W; ++k) out[i * W + k] = streams[k * n + first + i];
  }
}

void GatherAnyWidth(const uint8_t* streams, size_t width, size_t n, size_t first, size_t count,
                    uint8_t* out) {
  // Stream by stream: each stream is read in order.
  for (size_t k = 0; k < width; ++k) {
    const uint8_t* s = streams + k * n + first;
    for (size_t i = 0; i < count; ++i) out[i * width + k] = s[i];
  }
}

}  // namespace

Result<ByteStreamSplitDecoder> ByteStreamSplitDecoder::Create(std::string_view section,
                                                              size_t width) {
  if (width == 0) return EncodingError(kByteStreamSplit, 0, "value width 0; expected at least 1 byte");
  if (section.size() % width != 0) {
    return EncodingError(kByteStreamSplit, 0,
                         "a section of " + std::to_string(section.size()) +
                             " bytes; expected a whole number of " + std::to_string(width) +
                             "-byte values");
  }
  return ByteStreamSplitDecoder(reinterpret_cast<const uint8_t*>(section.data()), width,
                                section.size() / width);
}

Status ByteStreamSplitDecoder::Decode(size_t count, uint8_t* out) {
  if (count > values_left()) {
    return EncodingError(kByteStreamSplit, next_,
                         "expected " + std::to_string(count) + " values, found " +
                             std::to_string(values_left()));
  }
  switch (width_) {
    case 2: Gather<2>(data_, count_, next_, count, out); break;
    case 4: Gather<4>(data_, count_, next_, count, out); break;
    case 8: Gather<8>(data_, count_, next_, count, out); break;
    case 16: Gather<16>(data_, count_, next_, count, out); break;
    default: GatherAnyWidth(data_, width_, count_, next_, count, out); break;
  }
  next_ += count;
  return Status::Ok();
}

Status ByteStreamSplitDecoder::Typed(size_t count, size_t type_width, void* out) {
  if (type_width != width_) {
    return EncodingError(kByteStreamSplit, 0,
                         "values of " + std::to_string(width_) + " bytes read as a " +
                             std::to_string(type_width) + "-byte type");
  }
  return Decode(count, static_cast<uint8_t*>(out));
}

}  // namespace sluice::parquet

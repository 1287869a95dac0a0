// Unpacking of bit-packed integers in Parquet's order: values packed from
// the least significant bit of each byte up (the RLE/bit-packed hybrid,
// PLAIN BOOLEAN and DELTA_BINARY_PACKED miniblocks; not the deprecated
// BIT_PACKED encoding, which packs from the most significant bit).
//
// One specialised routine per width (shifts and masks known at compile
// time, eight values per step, loads of 8 bytes; widths 8, 16 and 32 a
// widening copy), chosen once per call.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::parquet {

// Bytes that `count` values of `width` bits occupy (the last byte padded).
// Exact for any count below 2^61.
inline uint64_t BitPackedBytes(uint64_t count, unsigned width) {
  return (count / 8) * width + ((count % 8) * width + 7) / 8;
}

// Unpacks `count` values of `width` bits (0..32) from `in` into out[0..count).
// `in` holds `in_size` bytes, at least BitPackedBytes(count, width) (the
// caller checks); nothing at or past in + in_size is read, so the values
// may end at the very end of a page.
void UnpackBits32(const uint8_t* in, size_t in_size, unsigned width, size_t count,
                  uint32_t* out);

// The same for widths 0..64 (DELTA_BINARY_PACKED miniblocks).
void UnpackBits64(const uint8_t* in, size_t in_size, unsigned width, size_t count,
                  uint64_t* out);

}  // namespace sluice::parquet

// Test-only encoders for Parquet's value encodings, written from the
// specification (parquet-format Encodings.md) independently of the
// decoders, for round trips and hand-shaped hostile inputs. Not for
// production: no limits, no error handling.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::parquet::test {

std::string Uleb128(uint64_t v);
std::string ZigZag(int64_t v);
std::string Le32(uint32_t v);

// `values` packed LSB first in `width` bits each (0..64), padded to a byte.
std::string PackBits(const std::vector<uint64_t>& values, unsigned width);

// One run of the RLE/bit-packed hybrid.
struct HybridRun {
  bool packed = false;
  uint64_t count = 0;              // RLE: repetitions
  uint32_t value = 0;              // RLE: the value
  std::vector<uint64_t> values;    // bit-packed: padded with zeros to a multiple of 8
};
std::string EncodeRuns(const std::vector<HybridRun>& runs, unsigned width);
// Runs chosen greedily: 8 or more equal values become an RLE run, the rest
// bit-packed groups (the last group padded with zeros).
std::string EncodeHybrid(const std::vector<uint32_t>& values, unsigned width);

// DELTA_BINARY_PACKED with the given block shape; arithmetic wraps at the
// type's width, each miniblock packed with the fewest bits (unused
// miniblocks' width bytes are `unused_width`).
std::string EncodeDeltaInt32(const std::vector<int32_t>& values, uint64_t block_size = 128,
                             uint64_t miniblocks = 4, uint8_t unused_width = 0);
std::string EncodeDeltaInt64(const std::vector<int64_t>& values, uint64_t block_size = 128,
                             uint64_t miniblocks = 4, uint8_t unused_width = 0);

std::string EncodeDeltaLength(const std::vector<std::string>& values);
std::string EncodeDeltaByteArray(const std::vector<std::string>& values);
std::string EncodePlainByteArrays(const std::vector<std::string>& values);
// `values` of `width` bytes each, concatenated, split into streams.
std::string EncodeByteStreamSplit(std::string_view values, size_t width);

// A copy of `bytes` in a heap block of exactly its size, so that a read past
// the end is caught by AddressSanitizer (a std::string has spare capacity).
class ExactCopy {
 public:
  explicit ExactCopy(std::string_view bytes)
      : size_(bytes.size()), data_(new char[bytes.size() == 0 ? 1 : bytes.size()]) {
    if (size_ > 0) std::memcpy(data_.get(), bytes.data(), size_);
  }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  size_t size_;
  std::unique_ptr<char[]> data_;
};

// A byte string from a list of byte values.
std::string Bytes(std::initializer_list<int> bytes);

}  // namespace sluice::parquet::test

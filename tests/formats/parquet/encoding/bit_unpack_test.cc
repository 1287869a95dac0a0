#include "formats/parquet/encoding/bit_unpack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::ExactCopy;
using test::PackBits;

TEST(BitUnpackTest, SpecificationExampleZeroToSevenInThreeBits) {
  // Encodings.md: 0..7 in 3 bits are 10001000 11000110 11111010.
  const ExactCopy in(test::Bytes({0x88, 0xC6, 0xFA}));
  uint32_t out[8] = {};
  UnpackBits32(reinterpret_cast<const uint8_t*>(in.view().data()), 3, 3, 8, out);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], i);
  EXPECT_EQ(PackBits({0, 1, 2, 3, 4, 5, 6, 7}, 3), test::Bytes({0x88, 0xC6, 0xFA}));
}

TEST(BitUnpackTest, BitPackedBytes) {
  EXPECT_EQ(BitPackedBytes(0, 5), 0u);
  EXPECT_EQ(BitPackedBytes(1, 5), 1u);
  EXPECT_EQ(BitPackedBytes(8, 5), 5u);
  EXPECT_EQ(BitPackedBytes(9, 7), 8u);
  EXPECT_EQ(BitPackedBytes(3, 64), 24u);
  EXPECT_EQ(BitPackedBytes(uint64_t{1} << 60, 64), uint64_t{1} << 63);
}

// Every width and every count up to 80 values, with the input ending exactly
// where the values do (ASan builds catch any read past it).
TEST(BitUnpackTest, EveryWidthAndCountFromAnExactBuffer32) {
  std::mt19937_64 rng(32);
  for (unsigned width = 0; width <= 32; ++width) {
    for (size_t count = 0; count <= 80; ++count) {
      std::vector<uint64_t> values(count);
      for (auto& v : values) v = width == 0 ? 0 : rng() >> (64 - width);
      const ExactCopy in(PackBits(values, width));
      ASSERT_EQ(in.view().size(), BitPackedBytes(count, width));
      std::vector<uint32_t> out(count + 1, 0xdeadbeef);
      UnpackBits32(reinterpret_cast<const uint8_t*>(in.view().data()), in.view().size(), width,
                   count, out.data());
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], values[i]) << width << " " << i;
      ASSERT_EQ(out[count], 0xdeadbeef) << "wrote past the count";
    }
  }
}

TEST(BitUnpackTest, EveryWidthAndCountFromAnExactBuffer64) {
  std::mt19937_64 rng(64);
  for (unsigned width = 0; width <= 64; ++width) {
    for (size_t count = 0; count <= 80; ++count) {
      std::vector<uint64_t> values(count);
      for (auto& v : values) v = width == 0 ? 0 : rng() >> (64 - width);
      const ExactCopy in(PackBits(values, width));
      std::vector<uint64_t> out(count + 1, 7);
      UnpackBits64(reinterpret_cast<const uint8_t*>(in.view().data()), in.view().size(), width,
                   count, out.data());
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], values[i]) << width << " " << i;
      ASSERT_EQ(out[count], 7u) << "wrote past the count";
    }
  }
}

// A long input takes the direct path for most groups: same values.
TEST(BitUnpackTest, LongInputsMatchThePacker) {
  std::mt19937_64 rng(7);
  for (unsigned width : {1u, 2u, 3u, 7u, 8u, 13u, 16u, 20u, 31u, 32u}) {
    std::vector<uint64_t> values(1000);
    for (auto& v : values) v = rng() >> (64 - width);
    const ExactCopy in(PackBits(values, width));
    std::vector<uint32_t> out(1000);
    UnpackBits32(reinterpret_cast<const uint8_t*>(in.view().data()), in.view().size(), width,
                 1000, out.data());
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(out[i], values[i]) << width << " " << i;
  }
}

}  // namespace
}  // namespace sluice::parquet

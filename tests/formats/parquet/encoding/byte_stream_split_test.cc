#include "formats/parquet/encoding/byte_stream_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::Bytes;
using test::EncodeByteStreamSplit;
using test::ExactCopy;

TEST(ByteStreamSplitTest, SpecificationExample) {
  // Three 4-byte values AA BB CC DD, 00 11 22 33, A3 B4 C5 D6.
  const ExactCopy in(
      Bytes({0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6}));
  auto d = ByteStreamSplitDecoder::Create(in.view(), 4);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->value_count(), 3u);
  uint8_t out[12];
  ASSERT_TRUE(d->Decode(3, out).ok());
  EXPECT_EQ(std::string(reinterpret_cast<char*>(out), 12),
            Bytes({0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6}));
}

TEST(ByteStreamSplitTest, TypedValues) {
  const std::vector<double> doubles = {1.5, -0.0, 1e300, -2.25};
  std::string raw(reinterpret_cast<const char*>(doubles.data()), 32);
  const ExactCopy in(EncodeByteStreamSplit(raw, 8));
  auto d = ByteStreamSplitDecoder::Create(in.view(), 8);
  ASSERT_TRUE(d.ok());
  double out[4];
  ASSERT_TRUE(d->DecodeDouble(1, out).ok());
  ASSERT_TRUE(d->DecodeDouble(3, out + 1).ok());
  EXPECT_EQ(std::memcmp(out, doubles.data(), 32), 0);
  float f;
  EXPECT_EQ(d->DecodeFloat(1, &f).ToString(),
            "corrupt: BYTE_STREAM_SPLIT at offset 0: values of 8 bytes read as a 4-byte type");
  EXPECT_EQ(d->DecodeDouble(1, out).ToString(),
            "corrupt: BYTE_STREAM_SPLIT at offset 4: expected 1 values, found 0");
  const std::vector<int32_t> ints = {1, -1, 0x12345678};
  const std::string split_ints =
      EncodeByteStreamSplit(std::string(reinterpret_cast<const char*>(ints.data()), 12), 4);
  auto di = ByteStreamSplitDecoder::Create(split_ints, 4);
  int32_t iout[3];
  ASSERT_TRUE(di->DecodeInt32(3, iout).ok());
  EXPECT_EQ(std::vector<int32_t>(iout, iout + 3), ints);
}

// Every width from 1 to 33 (FIXED_LEN_BYTE_ARRAY of any length), in batches.
TEST(ByteStreamSplitTest, EveryWidthRoundTrips) {
  std::mt19937_64 rng(11);
  for (size_t width = 1; width <= 33; ++width) {
    std::string raw(width * 101, '\0');
    for (char& c : raw) c = static_cast<char>(rng());
    const ExactCopy in(EncodeByteStreamSplit(raw, width));
    auto d = ByteStreamSplitDecoder::Create(in.view(), width);
    ASSERT_TRUE(d.ok());
    std::string out(raw.size(), '\0');
    size_t pos = 0;
    while (pos < 101) {
      const size_t n = std::min<size_t>(101 - pos, 1 + rng() % 30);
      ASSERT_TRUE(d->Decode(n, reinterpret_cast<uint8_t*>(out.data()) + pos * width).ok());
      pos += n;
    }
    ASSERT_EQ(out, raw) << width;
  }
}

TEST(ByteStreamSplitTest, SizesThatAreNotWholeValuesGiveErrors) {
  EXPECT_EQ(ByteStreamSplitDecoder::Create("abcdefghijklm", 4).status().ToString(),
            "corrupt: BYTE_STREAM_SPLIT at offset 0: a section of 13 bytes; expected a whole "
            "number of 4-byte values");
  EXPECT_EQ(ByteStreamSplitDecoder::Create("abcd", 0).status().ToString(),
            "corrupt: BYTE_STREAM_SPLIT at offset 0: value width 0; expected at least 1 byte");
  // Cut at every byte: either not a whole number of values, or fewer values.
  const std::string full(40, 'x');
  for (size_t cut = 0; cut < full.size(); ++cut) {
    auto d = ByteStreamSplitDecoder::Create(std::string_view(full).substr(0, cut), 8);
    if (!d.ok()) continue;
    uint8_t out[40];
    ASSERT_FALSE(d->Decode(5, out).ok()) << cut;
  }
}

}  // namespace
}  // namespace sluice::parquet

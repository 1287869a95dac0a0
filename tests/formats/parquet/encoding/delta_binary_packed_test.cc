#include "formats/parquet/encoding/delta_binary_packed.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::Bytes;
using test::EncodeDeltaInt32;
using test::EncodeDeltaInt64;
using test::ExactCopy;
using test::Uleb128;
using test::ZigZag;

template <typename T>
Result<std::vector<T>> DecodeAll(std::string_view stream, size_t count) {
  SLUICE_ASSIGN_OR_RETURN(auto d, DeltaBinaryPackedDecoder<T>::Create(stream));
  std::vector<T> out(count);
  SLUICE_RETURN_IF_ERROR(d.Decode(count, out.data()));
  return out;
}

template <typename T>
std::string ErrorOf(std::string_view stream, size_t count) {
  auto r = DecodeAll<T>(stream, count);
  return r.ok() ? "ok" : r.status().ToString();
}

// The specification's example 2 (7, 5, 3, 1, 2, 3, 4, 5) with a valid block
// shape (its block of 8 is for show): 128 values in 4 miniblocks of 32.
const std::string kExample2 =
    Bytes({0x80, 0x01,  // block size 128
           0x04,        // 4 miniblocks
           0x08,        // 8 values
           0x0E,        // first value 7 (zigzag 14)
           0x03,        // min delta -2 (zigzag 3)
           2, 0, 0, 0,  // widths; only the first miniblock holds values
           // relative deltas 0,0,0,3,3,3,3 and 25 padding zeros, 2 bits each
           0xC0, 0x3F, 0, 0, 0, 0, 0, 0});

TEST(DeltaBinaryPackedTest, SpecificationExamples) {
  const ExactCopy ex2(kExample2);
  auto out = DecodeAll<int32_t>(ex2.view(), 8);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<int32_t>{7, 5, 3, 1, 2, 3, 4, 5}));
  EXPECT_EQ(EncodeDeltaInt32({7, 5, 3, 1, 2, 3, 4, 5}), kExample2);
  auto d = DeltaBinaryPackedDecoder<int64_t>::Create(ex2.view());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->total_count(), 8u);
  EXPECT_EQ(d->EncodedSize().value(), kExample2.size());
  // Example 1 (1..5): min delta 1, width 0, no miniblock bytes.
  const ExactCopy ex1(Bytes({0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0}));
  auto one = DecodeAll<int64_t>(ex1.view(), 5);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

TEST(DeltaBinaryPackedTest, HeaderOnlyStreams) {
  // No values, and a single value: no block follows the header.
  const std::string none = Bytes({0x80, 0x01, 0x04, 0x00, 0x00});
  auto d = DeltaBinaryPackedDecoder<int32_t>::Create(none);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->total_count(), 0u);
  EXPECT_EQ(d->EncodedSize().value(), 5u);
  EXPECT_TRUE(d->Decode(0, nullptr).ok());
  const std::string one = Bytes({0x80, 0x01, 0x04, 0x01, 0x05}) + "tail";
  auto v = DecodeAll<int32_t>(one, 1);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, std::vector<int32_t>{-3});
  EXPECT_EQ(DeltaBinaryPackedDecoder<int32_t>::Create(one)->EncodedSize().value(), 5u);
}

TEST(DeltaBinaryPackedTest, ArithmeticWrapsAroundAtTheColumnsWidth) {
  const int32_t lo = std::numeric_limits<int32_t>::min();
  const int32_t hi = std::numeric_limits<int32_t>::max();
  const std::vector<int32_t> v32 = {hi, lo, hi, 0, lo, -1, 1, lo, lo, hi};
  auto out32 = DecodeAll<int32_t>(EncodeDeltaInt32(v32), v32.size());
  ASSERT_TRUE(out32.ok()) << out32.status().ToString();
  EXPECT_EQ(*out32, v32);
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  const int64_t hi64 = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> v64 = {hi64, lo64, hi64, 0, lo64, -1, 1, lo64, lo64, hi64};
  const std::string s64 = EncodeDeltaInt64(v64);
  auto out64 = DecodeAll<int64_t>(s64, v64.size());
  ASSERT_TRUE(out64.ok()) << out64.status().ToString();
  EXPECT_EQ(*out64, v64);
  // Read as INT32, a stream with 64-bit deltas gives each value's low 32
  // bits: the high bits fall off.
  auto low = DecodeAll<int32_t>(s64, v64.size());
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  for (size_t i = 0; i < v64.size(); ++i) EXPECT_EQ((*low)[i], static_cast<int32_t>(v64[i]));
}

// Every miniblock width 0..64: deltas needing exactly w bits, in several
// block shapes, decoded in uneven batches; EncodedSize ends where the
// stream does.
TEST(DeltaBinaryPackedTest, EveryWidthAndBlockShapeRoundTrips) {
  std::mt19937_64 rng(5);
  struct Shape { uint64_t block, miniblocks; };
  for (Shape shape : {Shape{128, 4}, Shape{128, 1}, Shape{256, 8}, Shape{2048, 8}}) {
    for (unsigned width = 0; width <= 64; ++width) {
      std::vector<int64_t> values = {static_cast<int64_t>(rng())};
      for (int i = 0; i < 700; ++i) {
        const uint64_t delta = width == 0 ? 0 : (rng() >> (64 - width)) | (uint64_t{1} << (width - 1));
        values.push_back(static_cast<int64_t>(static_cast<uint64_t>(values.back()) + delta));
      }
      const std::string stream = EncodeDeltaInt64(values, shape.block, shape.miniblocks, 0xEE);
      const ExactCopy in(stream + "after");
      auto d = DeltaBinaryPackedDecoder<int64_t>::Create(in.view());
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      ASSERT_EQ(d->EncodedSize().value(), stream.size()) << width;
      std::vector<int64_t> out(values.size());
      size_t pos = 0;
      while (pos < values.size()) {
        const size_t n = std::min<size_t>(values.size() - pos, 1 + rng() % 300);
        const Status s = d->Decode(n, out.data() + pos);
        ASSERT_TRUE(s.ok()) << width << ": " << s.ToString();
        pos += n;
      }
      ASSERT_EQ(out, values) << "width " << width << " block " << shape.block;
      EXPECT_EQ(d->values_left(), 0u);
    }
  }
  // INT32 streams, widths 0..32.
  for (unsigned width = 0; width <= 32; ++width) {
    std::vector<int32_t> values = {static_cast<int32_t>(rng())};
    for (int i = 0; i < 300; ++i) {
      const uint32_t delta = width == 0 ? 0 : static_cast<uint32_t>(rng() >> (64 - width)) |
                                                  (uint32_t{1} << (width - 1));
      values.push_back(static_cast<int32_t>(static_cast<uint32_t>(values.back()) + delta));
    }
    auto out = DecodeAll<int32_t>(EncodeDeltaInt32(values), values.size());
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(*out, values) << width;
  }
}

TEST(DeltaBinaryPackedTest, TruncationAtEveryByteIsAnError) {
  std::vector<int64_t> values;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 300; ++i) values.push_back(static_cast<int64_t>(rng() % 100000));
  const std::string full = EncodeDeltaInt64(values);
  ASSERT_TRUE(DecodeAll<int64_t>(full, values.size()).ok());
  for (size_t cut = 0; cut < full.size(); ++cut) {
    const ExactCopy in(std::string_view(full).substr(0, cut));
    auto r = DecodeAll<int64_t>(in.view(), values.size());
    ASSERT_FALSE(r.ok()) << cut;
    ASSERT_EQ(r.status().message().rfind("DELTA_BINARY_PACKED at offset ", 0), 0u)
        << r.status().message();
    auto d = DeltaBinaryPackedDecoder<int64_t>::Create(in.view());
    if (d.ok()) {
      ASSERT_FALSE(d->EncodedSize().ok()) << cut;
    }
  }
}

TEST(DeltaBinaryPackedTest, HostileHeadersGiveErrors) {
  const std::string tail = Bytes({0x04, 0x08, 0x0E});
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x00}) + tail, 1),
            "corrupt: DELTA_BINARY_PACKED at offset 0: block size 0; expected a multiple of 128 "
            "from 128 to 2147483520");
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x64}) + tail, 1),
            "corrupt: DELTA_BINARY_PACKED at offset 0: block size 100; expected a multiple of "
            "128 from 128 to 2147483520");
  EXPECT_EQ(ErrorOf<int32_t>(Uleb128(uint64_t{1} << 40) + tail, 1),
            "corrupt: DELTA_BINARY_PACKED at offset 0: block size 1099511627776; expected a "
            "multiple of 128 from 128 to 2147483520");
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x80, 0x01, 0x00, 0x08, 0x0E}), 1),
            "corrupt: DELTA_BINARY_PACKED at offset 2: 0 miniblocks in a block of 128 values; "
            "expected a divisor leaving a multiple of 32 values each");
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x80, 0x01, 0x03, 0x08, 0x0E}), 1),
            "corrupt: DELTA_BINARY_PACKED at offset 2: 3 miniblocks in a block of 128 values; "
            "expected a divisor leaving a multiple of 32 values each");
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x80, 0x01, 0x08, 0x08, 0x0E}), 1),
            "corrupt: DELTA_BINARY_PACKED at offset 2: 8 miniblocks in a block of 128 values; "
            "expected a divisor leaving a multiple of 32 values each");
  EXPECT_EQ(ErrorOf<int32_t>(Bytes({0x80, 0x01, 0x04, 0x08}), 1),
            "corrupt: DELTA_BINARY_PACKED at offset 4: the section ends inside the ULEB128 "
            "first value");
  // A width above 64, at its own byte.
  std::string bad = kExample2;
  bad[7] = 65;  // the second miniblock's width: read only once its values are needed
  EXPECT_EQ(ErrorOf<int32_t>(bad, 8), "ok");
  bad[6] = 65;
  EXPECT_EQ(ErrorOf<int32_t>(bad, 8),
            "corrupt: DELTA_BINARY_PACKED at offset 6: miniblock bit width 65; expected 0 to 64");
  EXPECT_EQ(DeltaBinaryPackedDecoder<int32_t>::Create(bad)->EncodedSize().status().ToString(),
            "corrupt: DELTA_BINARY_PACKED at offset 6: miniblock bit width 65; expected 0 to 64");
  // More values asked for than the header has.
  EXPECT_EQ(ErrorOf<int32_t>(kExample2, 9),
            "corrupt: DELTA_BINARY_PACKED at offset 5: expected 9 values, found 8 (the header's "
            "total is 8)");
  // A huge total over a few bytes: an error as soon as the bytes end, after
  // as much work as there are bytes.
  const std::string huge = Bytes({0x80, 0x01, 0x04}) + Uleb128(uint64_t{1} << 62) + ZigZag(0) +
                           Bytes({0x00, 64, 64, 64, 64});
  EXPECT_EQ(ErrorOf<int64_t>(huge, 1000),
            "corrupt: DELTA_BINARY_PACKED at offset 18: expected 256 bytes of miniblock 0 (32 "
            "values of 64 bits), found 0 (the section ends)");
  EXPECT_EQ(DeltaBinaryPackedDecoder<int64_t>::Create(huge)->EncodedSize().status().ToString(),
            "corrupt: DELTA_BINARY_PACKED at offset 18: expected 256 bytes of miniblock 0 (32 "
            "values of 64 bits), found 0 (the section ends)");
  // Width-0 blocks cost a few bytes per block: walking 2^62 values ends
  // with the bytes, at once.
  const std::string zeros = Bytes({0x80, 0x01, 0x01}) + Uleb128(uint64_t{1} << 62) + ZigZag(0) +
                            std::string(1000, '\0');
  EXPECT_EQ(DeltaBinaryPackedDecoder<int64_t>::Create(zeros)->EncodedSize().status().ToString(),
            "corrupt: DELTA_BINARY_PACKED at offset 1013: the section ends inside the ULEB128 "
            "block min delta");
}

}  // namespace
}  // namespace sluice::parquet

#include "formats/parquet/encoding/rle_bit_packed.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::Bytes;
using test::EncodeHybrid;
using test::EncodeRuns;
using test::ExactCopy;
using test::HybridRun;
using test::Le32;
using test::Uleb128;

// Decodes `count` values of `width` bits from `runs` in one call.
Result<std::vector<uint32_t>> DecodeAll(std::string_view runs, int width, size_t count) {
  SLUICE_ASSIGN_OR_RETURN(auto d, RleBitPackedDecoder::Create(runs, width));
  std::vector<uint32_t> out(count);
  SLUICE_RETURN_IF_ERROR(d.Decode(count, out.data()));
  return out;
}

std::string ErrorOf(std::string_view runs, int width, size_t count) {
  auto r = DecodeAll(runs, width, count);
  return r.ok() ? "ok" : r.status().ToString();
}

TEST(RleBitPackedTest, SpecificationBitPackedRun) {
  // One group of 8 (header (1 << 1) | 1), then 0..7 in 3 bits.
  const ExactCopy in(Bytes({0x03, 0x88, 0xC6, 0xFA}));
  auto out = DecodeAll(in.view(), 3, 8);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(RleBitPackedTest, RleRunsWithOneAndTwoByteValues) {
  // Five 4s then three 1s in 3 bits (one value byte each); at width 13 a
  // value takes two bytes.
  auto out = DecodeAll(Bytes({0x0A, 0x04, 0x06, 0x01}), 3, 8);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<uint32_t>{4, 4, 4, 4, 4, 1, 1, 1}));
  out = DecodeAll(Bytes({0x06, 0x34, 0x12}), 13, 3);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0x1234, 0x1234, 0x1234}));
  // Width 32: four value bytes, the largest value.
  out = DecodeAll(Bytes({0x04, 0xFF, 0xFF, 0xFF, 0xFF}), 32, 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0xFFFFFFFF, 0xFFFFFFFF}));
}

TEST(RleBitPackedTest, WidthZeroRunsHaveNoValueBytes) {
  // An RLE run of 10 and a bit-packed group, neither with value bytes.
  auto out = DecodeAll(Bytes({0x14, 0x03}), 0, 18);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, std::vector<uint32_t>(18, 0));
}

TEST(RleBitPackedTest, LengthPrefixedLevelsSayWhereTheValuesStart) {
  const std::string runs = EncodeHybrid({1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1);
  const ExactCopy page(Le32(static_cast<uint32_t>(runs.size())) + runs + "VALUES");
  size_t consumed = 0;
  auto d = RleBitPackedDecoder::CreateWithLengthPrefix(page.view(), 1, &consumed);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(consumed, 4 + runs.size());
  EXPECT_EQ(page.view().substr(consumed), "VALUES");
  std::vector<uint32_t> out(12);
  ASSERT_TRUE(d->Decode(12, out.data()).ok());
  EXPECT_EQ(out, (std::vector<uint32_t>{1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  // The values after the levels are not runs: past the 4 values that pad
  // the last group, asking for more fails at the end of the levels.
  EXPECT_EQ(d->Decode(5, out.data()).ToString(),
            "corrupt: RLE at offset " + std::to_string(4 + runs.size()) +
                ": expected 5 values, found 4 (the runs end)");
}

TEST(RleBitPackedTest, DictionaryIndicesStartWithTheirWidth) {
  // Width 10: RLE run of 3 x 700 (two value bytes), then a group of 8.
  const std::vector<uint32_t> want = {700, 700, 700, 1, 2, 3, 1023, 0, 5, 6, 7};
  std::string section = Bytes({10}) + EncodeRuns({{false, 3, 700, {}},
                                                  {true, 0, 0, {1, 2, 3, 1023, 0, 5, 6, 7}}},
                                                 10);
  const ExactCopy in(section);
  auto d = RleBitPackedDecoder::CreateForDictionaryIndices(in.view());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->bit_width(), 10);
  std::vector<uint32_t> out(want.size());
  ASSERT_TRUE(d->Decode(out.size(), out.data()).ok());
  EXPECT_EQ(out, want);
}

// Every width 0..32, runs of both kinds, decoded in uneven batches with
// skips between them: the same values as the encoder's input.
TEST(RleBitPackedTest, EveryWidthRoundTripsInBatchesAndSkips) {
  std::mt19937_64 rng(1);
  for (int width = 0; width <= 32; ++width) {
    std::vector<uint32_t> values;
    const uint64_t mask = width == 0 ? 0 : (uint64_t{1} << width) - 1;
    while (values.size() < 3000) {
      const uint32_t v = static_cast<uint32_t>(rng() & mask);
      const size_t repeat = rng() % 3 == 0 ? 1 + rng() % 40 : 1;
      values.insert(values.end(), repeat, v);
    }
    const ExactCopy in(EncodeHybrid(values, static_cast<unsigned>(width)));
    auto d = RleBitPackedDecoder::Create(in.view(), width);
    ASSERT_TRUE(d.ok());
    size_t pos = 0;
    while (pos < values.size()) {
      const size_t n = std::min<size_t>(values.size() - pos, 1 + rng() % 37);
      if (rng() % 4 == 0) {
        ASSERT_TRUE(d->Skip(n).ok()) << width;
      } else {
        std::vector<uint32_t> out(n);
        const Status s = d->Decode(n, out.data());
        ASSERT_TRUE(s.ok()) << width << ": " << s.ToString();
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], values[pos + i]) << width << " " << pos + i;
      }
      pos += n;
    }
    // At most 7 values pad the last group.
    EXPECT_FALSE(d->Skip(8).ok()) << "values past the end, width " << width;
  }
}

// Cut anywhere, runs without padding cannot give all their values: an
// error, never a crash or a read past the cut.
TEST(RleBitPackedTest, TruncationAtEveryByteIsAnError) {
  std::mt19937_64 rng(2);
  for (int width : {1, 3, 8, 17, 32}) {
    std::vector<uint32_t> values;
    std::vector<HybridRun> runs;
    const uint64_t mask = (uint64_t{1} << width) - 1;
    while (values.size() < 200) {
      HybridRun r{rng() % 2 == 0, 0, 0, {}};
      if (r.packed) {
        for (int i = 0; i < 16; ++i) r.values.push_back(rng() & mask);
        values.insert(values.end(), r.values.begin(), r.values.end());
      } else {
        r.count = 1 + rng() % 20;
        r.value = static_cast<uint32_t>(rng() & mask);
        values.insert(values.end(), r.count, r.value);
      }
      runs.push_back(r);
    }
    const std::string full = EncodeRuns(runs, static_cast<unsigned>(width));
    ASSERT_EQ(DecodeAll(full, width, values.size()).value(), values);
    for (size_t cut = 0; cut < full.size(); ++cut) {
      const ExactCopy in(std::string_view(full).substr(0, cut));
      auto r = DecodeAll(in.view(), width, values.size());
      ASSERT_FALSE(r.ok()) << "width " << width << " cut " << cut;
      ASSERT_EQ(r.status().message().rfind("RLE at offset ", 0), 0u) << r.status().message();
    }
  }
}

TEST(RleBitPackedTest, AMissingPaddingGroupTailIsAccepted) {
  // 10 values in 5 bits: two groups, 10 bytes; the last 3 bytes hold only
  // padding, and a writer may leave them out.
  const std::vector<uint32_t> values = {1, 2, 3, 4, 5, 6, 7, 8, 31, 30};
  std::string full = EncodeRuns({{true, 0, 0, {1, 2, 3, 4, 5, 6, 7, 8, 31, 30}}}, 5);
  ASSERT_EQ(full.size(), 1u + 10);
  const ExactCopy in(std::string_view(full).substr(0, full.size() - 3));
  auto out = DecodeAll(in.view(), 5, 10);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, values);
  // One value more than the bytes hold: 7 bytes hold 11 values.
  EXPECT_EQ(ErrorOf(in.view(), 5, 12),
            "corrupt: RLE at offset 8: expected 12 values, found 11 (the runs end)");
}

TEST(RleBitPackedTest, TheEncodingNameIsCopied) {
  // A name built by the caller may be gone when an error names it.
  const std::string section = Bytes({3});
  auto d = RleBitPackedDecoder::CreateForDictionaryIndices(section, std::string("PLAIN_") + "DICTIONARY");
  ASSERT_TRUE(d.ok());
  uint32_t v = 0;
  EXPECT_EQ(d->Decode(1, &v).ToString(),
            "corrupt: PLAIN_DICTIONARY at offset 1: expected 1 values, found 0 (the runs end)");
}

TEST(RleBitPackedTest, HostileHeadersGiveErrors) {
  EXPECT_EQ(RleBitPackedDecoder::Create("", 33).status().ToString(),
            "corrupt: RLE at offset 0: bit width 33; expected 0 to 32");
  EXPECT_EQ(RleBitPackedDecoder::Create("", -1).status().ToString(),
            "corrupt: RLE at offset 0: bit width -1; expected 0 to 32");
  EXPECT_EQ(RleBitPackedDecoder::CreateForDictionaryIndices(Bytes({33, 0})).status().ToString(),
            "corrupt: RLE_DICTIONARY at offset 0: dictionary index bit width 33; expected 0 to 32");
  EXPECT_EQ(RleBitPackedDecoder::CreateForDictionaryIndices("").status().ToString(),
            "corrupt: RLE_DICTIONARY at offset 0: expected 1 bytes of bit width, found 0 (the "
            "section ends)");
  size_t consumed = 0;
  EXPECT_EQ(RleBitPackedDecoder::CreateWithLengthPrefix(Le32(100) + "abc", 1, &consumed)
                .status()
                .ToString(),
            "corrupt: RLE at offset 0: length prefix 100; expected at most the 3 bytes after it");
  EXPECT_EQ(RleBitPackedDecoder::CreateWithLengthPrefix(Le32(0xFFFFFFFF), 1, &consumed)
                .status()
                .ToString(),
            "corrupt: RLE at offset 0: length prefix 4294967295; expected at most the 0 bytes "
            "after it");
  EXPECT_EQ(RleBitPackedDecoder::CreateWithLengthPrefix("ab", 1, &consumed).status().ToString(),
            "corrupt: RLE at offset 0: expected 4 bytes of length prefix, found 2 (the section "
            "ends)");
  // Runs of 0 values, and longer than 2^31 - 1.
  EXPECT_EQ(ErrorOf(Bytes({0x00, 0x01}), 1, 1),
            "corrupt: RLE at offset 0: RLE run of 0 values; expected 1 to 2147483647");
  EXPECT_EQ(ErrorOf(Bytes({0x01}), 1, 1),
            "corrupt: RLE at offset 0: bit-packed run of 0 values; expected 1 to 2147483647");
  EXPECT_EQ(ErrorOf(Uleb128(uint64_t{1} << 32) + Bytes({1}), 1, 1),
            "corrupt: RLE at offset 0: RLE run of 2147483648 values; expected 1 to 2147483647");
  EXPECT_EQ(ErrorOf(Uleb128((uint64_t{1} << 28) << 1 | 1), 1, 1),
            "corrupt: RLE at offset 0: bit-packed run of 2147483648 values; expected 1 to "
            "2147483647");
  // A header that never ends, or exceeds 64 bits.
  EXPECT_EQ(ErrorOf(Bytes({0x80, 0x80}), 1, 1),
            "corrupt: RLE at offset 0: the section ends inside the ULEB128 run header");
  EXPECT_EQ(ErrorOf(std::string(9, '\xff') + Bytes({0x02}), 1, 1),
            "corrupt: RLE at offset 0: the ULEB128 run header exceeds 64 bits");
  // An RLE value wider than the bit width, or missing.
  EXPECT_EQ(ErrorOf(Bytes({0x04, 0x09}), 3, 2),
            "corrupt: RLE at offset 1: RLE run value 9; expected at most 7 (bit width 3)");
  EXPECT_EQ(ErrorOf(Bytes({0x04, 0x09}), 9, 2),
            "corrupt: RLE at offset 1: expected 2 bytes of RLE run value, found 1 (the section "
            "ends)");
  // A bit-packed run declaring 2^27 groups over 3 bytes gives its 8 values
  // and then an error, at once.
  EXPECT_EQ(ErrorOf(Uleb128((uint64_t{1} << 27) << 1 | 1) + Bytes({0x88, 0xC6, 0xFA}), 3, 100),
            "corrupt: RLE at offset 8: expected 100 values, found 8 (the runs end)");
  // A bit-packed run with no whole value in what is left.
  EXPECT_EQ(ErrorOf(Bytes({0x03, 0xFF}), 9, 1),
            "corrupt: RLE at offset 0: expected 1 values, found 0 (a bit-packed run with no "
            "whole value before the end)");
}

TEST(RleBitPackedTest, ALongRunIsDecodedInPartsWithoutExpanding) {
  // 2^31 - 1 ones in two bytes of header plus one of value: asking for a
  // few at a time costs only what is asked.
  const std::string runs = Uleb128(((uint64_t{1} << 31) - 1) << 1) + Bytes({1});
  auto d = RleBitPackedDecoder::Create(runs, 1);
  ASSERT_TRUE(d.ok());
  std::vector<uint32_t> out(1000);
  ASSERT_TRUE(d->Decode(1000, out.data()).ok());
  EXPECT_EQ(out, std::vector<uint32_t>(1000, 1));
  ASSERT_TRUE(d->Skip((uint64_t{1} << 31) - 1 - 1000 - 1).ok());
  ASSERT_TRUE(d->Decode(1, out.data()).ok());
  EXPECT_FALSE(d->Decode(1, out.data()).ok());
}

TEST(RleBitPackedTest, AHugeSkipEndsWithTheRuns) {
  // 1,000 maximal RLE runs: skipping 2^62 values stops, after them, with
  // an error (work in proportion to the runs, not to the count).
  std::string runs;
  for (int i = 0; i < 1000; ++i) runs += Uleb128(((uint64_t{1} << 31) - 1) << 1) + Bytes({1});
  auto d = RleBitPackedDecoder::Create(runs, 1);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Skip(size_t{1} << 62).ToString(),
            "corrupt: RLE at offset 6000: expected 4611686018427387904 values, found "
            "2147483647000 (the runs end)");
}

}  // namespace
}  // namespace sluice::parquet

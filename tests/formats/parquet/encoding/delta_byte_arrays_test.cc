// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/parquet/encoding/delta_byte_array.h"
#include "formats/parquet/encoding/delta_length_byte_array.h"
#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::EncodeDeltaByteArray;
using test::EncodeDeltaInt32;
using test::EncodeDeltaLength;
using test::ExactCopy;

Result<std::vector<std::string>> DecodeLengths(std::string_view section, size_t count) {
  SLUICE_ASSIGN_OR_RETURN(auto d, DeltaLengthByteArrayDecoder::Create(section));
  std::vector<std::string_view> views(count);
  SLUICE_RETURN_IF_ERROR(d.Decode(count, views.data()));
  return std::vector<std::string>(views.begin(), views.end());
}

Result<std::vector<std::string>> DecodeStrings(std::string_view section, size_t count,
                                               uint64_t budget = 1 << 20, size_t width = 0) {
  SLUICE_ASSIGN_OR_RETURN(auto d, DeltaByteArrayDecoder::Create(section, budget, width));
  OwnedByteArrays out;
  SLUICE_RETURN_IF_ERROR(d.Decode(count, &out));
  std::vector<std::string> v;
  for (size_t i = 0; i < out.size(); ++i) v.emplace_back(out[i]);
  return v;
}

// The bytes of all suffixes front coding leaves.
size_t SuffixBytes(const std::vector<std::string>& values) {
  size_t total = 0;
  std::string_view previous;
  for (std::string_view v : values) {
    size_t p = 0;
    while (p < v.size() && p < previous.size() && v[p] == previous[p]) ++p;
    total += v.size() - p;
    previous = v;
  }
  return total;
}

template <typename R>
std::string ErrorOf(const R& r) {
  return r.ok() ? "ok" : r.status().ToString();
}

TEST(DeltaLengthByteArrayTest, SpecificationExample) {
  const std::vector<std::string> values = {"Hello", "World", "Foobar", "ABCDEF"};
  const std::string section = EncodeDeltaLength(values);
  EXPECT_EQ(section.substr(section.size() - 22), "HelloWorldFoobarABCDEF");
  const ExactCopy in(section);
  auto d = DeltaLengthByteArrayDecoder::Create(in.view());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->total_count(), 4u);
  std::string_view out[4];
  ASSERT_TRUE(d->Decode(1, out).ok());
  ASSERT_TRUE(d->Decode(3, out + 1).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], values[i]);
  // Views into the section, no copy.
  EXPECT_EQ(out[0].data(), in.view().data() + section.size() - 22);
  EXPECT_EQ(d->bytes_left(), 0u);
}

TEST(DeltaLengthByteArrayTest, ManyValuesRoundTrip) {
  std::mt19937_64 rng(3);
  std::vector<std::string> values;
  for (int i = 0; i < 2000; ++i) values.push_back(std::string(rng() % 50, static_cast<char>('a' + i % 26)));
  auto out = DecodeLengths(EncodeDeltaLength(values), values.size());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, values);
}

TEST(DeltaLengthByteArrayTest, BadLengthsGiveErrors) {
  // A negative length, and one past the bytes.
  EXPECT_EQ(ErrorOf(DecodeLengths(EncodeDeltaInt32({2, -1}) + "ab", 2)),
            "corrupt: DELTA_LENGTH_BYTE_ARRAY at offset 12: value 1 has length -1; expected 0 "
            "to the 0 bytes left");
  EXPECT_EQ(ErrorOf(DecodeLengths(EncodeDeltaInt32({2, 5}) + "abcd", 2)),
            "corrupt: DELTA_LENGTH_BYTE_ARRAY at offset 12: value 1 has length 5; expected 0 "
            "to the 2 bytes left");
  EXPECT_EQ(ErrorOf(DecodeLengths(EncodeDeltaInt32({2}) + "ab", 2)),
            "corrupt: DELTA_LENGTH_BYTE_ARRAY at offset 5: expected 2 values, found 1 (the "
            "length stream's total is 1)");
}

TEST(DeltaLengthByteArrayTest, TruncationAtEveryByteIsAnError) {
  const std::string full = EncodeDeltaLength({"alpha", "", "gamma", "delta", "x"});
  for (size_t cut = 0; cut < full.size(); ++cut) {
    const ExactCopy in(std::string_view(full).substr(0, cut));
    ASSERT_FALSE(DecodeLengths(in.view(), 5).ok()) << cut;
  }
}

TEST(DeltaByteArrayTest, SpecificationExample) {
  const std::vector<std::string> values = {"axis", "axle", "babble", "babyhood"};
  const std::string section = EncodeDeltaByteArray(values);
  // Prefix lengths 0,2,0,3, then suffix lengths 4,2,6,5 and the suffixes.
  EXPECT_EQ(section, EncodeDeltaInt32({0, 2, 0, 3}) + EncodeDeltaInt32({4, 2, 6, 5}) +
                         "axislebabbleyhood");
  const ExactCopy in(section);
  auto out = DecodeStrings(in.view(), 4);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, values);
}

TEST(DeltaByteArrayTest, ManyValuesInBatchesAndFixedWidth) {
  std::mt19937_64 rng(4);
  std::vector<std::string> values;
  std::string s = "prefix";
  for (int i = 0; i < 1500; ++i) {
    s.resize(rng() % (s.size() + 1));
    while (s.size() < 12) s.push_back(static_cast<char>('a' + rng() % 3));
    s.resize(12);
    values.push_back(s);
  }
  const ExactCopy in(EncodeDeltaByteArray(values));
  auto d = DeltaByteArrayDecoder::Create(in.view(), 1 << 20, 12);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  OwnedByteArrays out;
  size_t pos = 0;
  while (pos < values.size()) {
    const size_t n = std::min<size_t>(values.size() - pos, 1 + rng() % 400);
    ASSERT_TRUE(d->Decode(n, &out).ok());
    pos += n;
  }
  ASSERT_EQ(out.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(out[i], values[i]) << i;
  // The same bytes as FIXED_LEN_BYTE_ARRAY(11) are wrong: the error points
  // at the first value's suffix, the start of the suffix bytes.
  EXPECT_EQ(ErrorOf(DecodeStrings(in.view(), 1, 1 << 20, 11)),
            "corrupt: DELTA_BYTE_ARRAY at offset " +
                std::to_string(in.view().size() - SuffixBytes(values)) +
                ": value 0 has 12 bytes; expected the fixed width 11");
}

TEST(DeltaByteArrayTest, BadPrefixesAndCountsGiveErrors) {
  // The first value cannot share a prefix; a later one no more than the
  // previous value has.
  EXPECT_EQ(ErrorOf(DecodeStrings(EncodeDeltaInt32({1}) + EncodeDeltaLength({"a"}), 1)),
            "corrupt: DELTA_BYTE_ARRAY at offset 10: value 0 has prefix length 1; expected 0 to "
            "the previous value's 0 bytes");
  EXPECT_EQ(ErrorOf(DecodeStrings(EncodeDeltaInt32({0, 3}) + EncodeDeltaLength({"ab", "c"}), 2)),
            "corrupt: DELTA_BYTE_ARRAY at offset 22: value 1 has prefix length 3; expected 0 to "
            "the previous value's 2 bytes");
  EXPECT_EQ(ErrorOf(DecodeStrings(EncodeDeltaInt32({0, -1}) + EncodeDeltaLength({"ab", "c"}), 2)),
            "corrupt: DELTA_BYTE_ARRAY at offset 22: value 1 has prefix length -1; expected 0 "
            "to the previous value's 2 bytes");
  EXPECT_EQ(ErrorOf(DecodeStrings(EncodeDeltaInt32({0, 0}) + EncodeDeltaLength({"ab"}), 1)),
            "corrupt: DELTA_BYTE_ARRAY at offset 10: the suffixes count 1 values; expected the "
            "prefix lengths' 2");
}

TEST(DeltaByteArrayTest, OutputBeyondTheBudgetIsAnError) {
  // 1000 values each repeating the previous 1000 bytes: 1 MB of output
  // from a stream of about 1.3 KB.
  std::vector<int32_t> prefixes(1000, 1000);
  prefixes[0] = 0;
  std::vector<std::string> suffixes(1000, "");
  suffixes[0] = std::string(1000, 'z');
  const std::string section = EncodeDeltaInt32(prefixes) + EncodeDeltaLength(suffixes);
  EXPECT_LT(section.size(), 1400u);
  auto ok = DecodeStrings(section, 1000, 1000 * 1000);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[999], std::string(1000, 'z'));
  EXPECT_EQ(ErrorOf(DecodeStrings(section, 1000, 1000 * 1000 - 1)),
            "corrupt: DELTA_BYTE_ARRAY at offset " + std::to_string(section.size()) +
                ": value 999 would bring the output to 1000000 bytes; expected at most 999999");
}

TEST(DeltaByteArrayTest, TruncationAtEveryByteIsAnError) {
  const std::string full = EncodeDeltaByteArray({"axis", "axle", "babble", "babyhood", "b"});
  for (size_t cut = 0; cut < full.size(); ++cut) {
    const ExactCopy in(std::string_view(full).substr(0, cut));
    ASSERT_FALSE(DecodeStrings(in.view(), 5).ok()) << cut;
  }
}

}  // namespace
}  // namespace sluice::parquet

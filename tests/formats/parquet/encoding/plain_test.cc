#include "formats/parquet/encoding/plain.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::Bytes;
using test::EncodePlainByteArrays;
using test::ExactCopy;
using test::Le32;

bool Inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

TEST(PlainTest, BooleansAreBitPackedLsbFirstAcrossCalls) {
  // 0b11001010, 0b00000101: 0,1,0,1,0,0,1,1, 1,0,1
  const ExactCopy in(Bytes({0xCA, 0x05}));
  PlainDecoder d(in.view());
  uint8_t out[11] = {};
  ASSERT_TRUE(d.DecodeBooleans(3, out).ok());
  ASSERT_TRUE(d.DecodeBooleans(8, out + 3).ok());
  EXPECT_EQ(std::vector<uint8_t>(out, out + 11),
            (std::vector<uint8_t>{0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1}));
  // 5 bits are left in the last byte.
  ASSERT_TRUE(d.DecodeBooleans(5, out).ok());
  EXPECT_EQ(d.DecodeBooleans(1, out).ToString(),
            "corrupt: PLAIN at offset 2: expected 1 BOOLEAN values, found 0 bits (the section "
            "ends)");
}

TEST(PlainTest, BooleansManyWholeBytes) {
  std::string bytes;
  std::vector<uint8_t> want;
  for (int i = 0; i < 100; ++i) {
    bytes.push_back(static_cast<char>(i * 37));
    for (int k = 0; k < 8; ++k) want.push_back(((i * 37) >> k) & 1);
  }
  const ExactCopy in(bytes);
  PlainDecoder d(in.view());
  std::vector<uint8_t> out(800);
  ASSERT_TRUE(d.DecodeBooleans(5, out.data()).ok());
  ASSERT_TRUE(d.DecodeBooleans(795, out.data() + 5).ok());
  EXPECT_EQ(out, want);
  EXPECT_EQ(d.remaining(), 0u);
}

TEST(PlainTest, FixedWidthNumbers) {
  std::string bytes = Le32(0xFFFFFFFE) + Le32(7);                    // INT32 -2, 7
  bytes += Bytes({1, 0, 0, 0, 0, 0, 0, 0x80});                        // INT64 min + 1
  bytes += Bytes({0x00, 0x00, 0xC0, 0x3F});                           // FLOAT 1.5
  bytes += Bytes({0, 0, 0, 0, 0, 0, 0xF0, 0xBF});                     // DOUBLE -1
  const ExactCopy in(bytes);
  PlainDecoder d(in.view());
  int32_t i32[2];
  int64_t i64;
  float f;
  double g;
  ASSERT_TRUE(d.DecodeInt32(2, i32).ok());
  ASSERT_TRUE(d.DecodeInt64(1, &i64).ok());
  ASSERT_TRUE(d.DecodeFloat(1, &f).ok());
  ASSERT_TRUE(d.DecodeDouble(1, &g).ok());
  EXPECT_EQ(i32[0], -2);
  EXPECT_EQ(i32[1], 7);
  EXPECT_EQ(i64, std::numeric_limits<int64_t>::min() + 1);
  EXPECT_EQ(f, 1.5f);
  EXPECT_EQ(g, -1.0);
  EXPECT_EQ(d.DecodeInt32(1, i32).ToString(),
            "corrupt: PLAIN at offset 28: expected 1 fixed-width values of 4 bytes, found 0 bytes "
            "(the section ends)");
}

TEST(PlainTest, Int96TimestampsAsPyarrowReadsThem) {
  // 2000-01-01 00:00:01: Julian day 2451545, 1e9 ns into the day.
  std::string bytes = Bytes({0x00, 0xCA, 0x9A, 0x3B, 0, 0, 0, 0}) + Le32(2451545);
  // 1970-01-01 itself, and the day before.
  bytes += std::string(8, '\0') + Le32(2440588);
  bytes += Bytes({1, 0, 0, 0, 0, 0, 0, 0}) + Le32(2440587);
  const ExactCopy in(bytes);
  PlainDecoder d(in.view());
  Int96 v[3];
  ASSERT_TRUE(d.DecodeInt96(3, v).ok());
  EXPECT_EQ(v[0].nanos_of_day, 1000000000u);
  EXPECT_EQ(v[0].julian_day, 2451545u);
  EXPECT_EQ(Int96ToUnixNanos(v[0]), 946684801000000000);
  EXPECT_EQ(Int96ToUnixNanos(v[1]), 0);
  EXPECT_EQ(Int96ToUnixNanos(v[2]), -86400000000000 + 1);
}

TEST(PlainTest, ByteArraysAreViewsIntoTheSection) {
  const std::vector<std::string> values = {"hello", "", std::string("\0\xff", 2), "world!"};
  const ExactCopy in(EncodePlainByteArrays(values));
  PlainDecoder d(in.view());
  std::string_view out[4];
  ASSERT_TRUE(d.DecodeByteArrays(1, out).ok());
  ASSERT_TRUE(d.DecodeByteArrays(3, out + 1).ok());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i], values[i]);
    EXPECT_TRUE(Inside(out[i], in.view()));
  }
  EXPECT_EQ(out[0].data(), in.view().data() + 4);
  EXPECT_EQ(d.remaining(), 0u);
}

TEST(PlainTest, FixedLenByteArraysAndRawFixedWidthViews) {
  const ExactCopy in("abcdefghijk");
  PlainDecoder d(in.view());
  std::string_view out[3];
  ASSERT_TRUE(d.DecodeFixedLenByteArrays(3, 3, out).ok());
  EXPECT_EQ(out[0], "abc");
  EXPECT_EQ(out[2], "ghi");
  EXPECT_EQ(out[1].data(), in.view().data() + 3);
  std::string_view raw;
  ASSERT_TRUE(d.TakeFixedWidth(1, 2, &raw).ok());
  EXPECT_EQ(raw, "jk");
  EXPECT_EQ(raw.data(), in.view().data() + 9);
  EXPECT_EQ(d.TakeFixedWidth(1, 0, &raw).ToString(),
            "corrupt: PLAIN at offset 11: a fixed width of 0 bytes; expected at least 1");
}

TEST(PlainTest, ByteArrayErrorsNameTheValueAndOffset) {
  // A negative length (0x80000000 read as int32).
  std::string bytes = EncodePlainByteArrays({"ab"}) + Le32(0x80000000) + "xyz";
  PlainDecoder d(bytes);
  std::string_view out[2];
  EXPECT_EQ(d.DecodeByteArrays(2, out).ToString(),
            "corrupt: PLAIN at offset 6: byte array 1 of 2 has length -2147483648; expected 0 "
            "to the 3 bytes left");
  // A length past the end.
  const std::string past_end = Le32(4) + "abc";
  PlainDecoder d2(past_end);
  EXPECT_EQ(d2.DecodeByteArrays(1, out).ToString(),
            "corrupt: PLAIN at offset 0: byte array 0 of 1 has length 4; expected 0 to the 3 "
            "bytes left");
  // A length cut short.
  const std::string cut_length = Le32(1) + "a" + Bytes({1, 0});
  PlainDecoder d3(cut_length);
  EXPECT_EQ(d3.DecodeByteArrays(2, out).ToString(),
            "corrupt: PLAIN at offset 5: expected the 4-byte length of byte array 1 of 2, found "
            "2 bytes (the section ends)");
}

// Twenty sections (more than the walks kept at once, so finished ones are
// replaced), of 0 to 19 values each: every value found, as views in place.
TEST(PlainTest, ByteArraysOfManySectionsAreFoundTogether) {
  std::vector<std::vector<std::string>> values(20);
  std::vector<std::string> encoded;
  for (size_t s = 0; s < values.size(); ++s) {
    for (size_t i = 0; i < s; ++i) values[s].push_back(std::string(s * 7 % 5 + i, char('a' + s)));
    encoded.push_back(EncodePlainByteArrays(values[s]) + "trailing bytes are not read");
  }
  std::vector<std::vector<std::string_view>> out(values.size());
  std::vector<ByteArraySection> sections;
  for (size_t s = 0; s < values.size(); ++s) {
    out[s].resize(values[s].size());
    sections.push_back(ByteArraySection{encoded[s], values[s].size(), out[s].data()});
  }
  EXPECT_EQ(FindByteArrays(sections), values.size());
  for (size_t s = 0; s < values.size(); ++s) {
    ASSERT_EQ(out[s].size(), values[s].size());
    for (size_t i = 0; i < values[s].size(); ++i) {
      EXPECT_EQ(out[s][i], values[s][i]) << s << " " << i;
      EXPECT_TRUE(Inside(out[s][i], encoded[s])) << s << " " << i;
    }
  }
  EXPECT_EQ(FindByteArrays({}), 0u);
}

// The first bad section is named, whichever walk meets its fault first;
// DecodeByteArrays then gives the error.
TEST(PlainTest, FindByteArraysNamesTheFirstBadSection) {
  const std::string good = EncodePlainByteArrays({"a", "bb", "ccc"});
  const std::string negative = EncodePlainByteArrays({"ab"}) + Le32(0x80000000) + "xyz";
  const std::string past_end = Le32(4) + "abc";
  const std::string cut_length = Le32(1) + "a" + Bytes({1, 0});
  std::string_view out[16][3];
  // Bad at 2 (its fault lies late) and at 9 (at once): 2 is named.
  std::vector<ByteArraySection> sections;
  for (size_t s = 0; s < 12; ++s) sections.push_back(ByteArraySection{good, 3, out[s]});
  sections[2] = ByteArraySection{cut_length, 2, out[2]};
  sections[9] = ByteArraySection{past_end, 1, out[9]};
  EXPECT_EQ(FindByteArrays(sections), 2u);
  sections[2] = ByteArraySection{good, 4, out[2]};  // one value more than it holds
  EXPECT_EQ(FindByteArrays(sections), 2u);
  sections[2] = ByteArraySection{good, 3, out[2]};
  EXPECT_EQ(FindByteArrays(sections), 9u);
  sections[11] = ByteArraySection{negative, 2, out[11]};
  EXPECT_EQ(FindByteArrays(sections), 9u);
  sections[9] = ByteArraySection{good, 3, out[9]};
  EXPECT_EQ(FindByteArrays(sections), 11u);
  EXPECT_EQ(PlainDecoder(negative).DecodeByteArrays(2, out[11]).ToString(),
            "corrupt: PLAIN at offset 6: byte array 1 of 2 has length -2147483648; expected 0 "
            "to the 3 bytes left");
}

TEST(PlainTest, HugeCountsFailAtOnce) {
  PlainDecoder d(std::string_view("abcdefgh"));
  // Counts whose byte size overflows 64 bits must not wrap around.
  EXPECT_EQ(d.TakeFixedWidth(std::numeric_limits<size_t>::max() / 2, 4, nullptr).ToString(),
            "corrupt: PLAIN at offset 0: expected 9223372036854775807 fixed-width values of 4 "
            "bytes, found 8 bytes (the section ends)");
  EXPECT_EQ(d.DecodeBooleans(65, nullptr).ToString(),
            "corrupt: PLAIN at offset 0: expected 65 BOOLEAN values, found 64 bits (the section "
            "ends)");
}

// Every cut of a valid section fails for the full count, for every type.
TEST(PlainTest, TruncationAtEveryByteIsAnError) {
  const std::string arrays = EncodePlainByteArrays({"one", "", "three", "four!"});
  for (size_t cut = 0; cut < arrays.size(); ++cut) {
    const ExactCopy in(std::string_view(arrays).substr(0, cut));
    PlainDecoder d(in.view());
    std::string_view out[4];
    ASSERT_FALSE(d.DecodeByteArrays(4, out).ok()) << cut;
  }
  const std::string numbers(24, '\x11');
  for (size_t cut = 0; cut < numbers.size(); ++cut) {
    const ExactCopy in(std::string_view(numbers).substr(0, cut));
    int64_t i64[3];
    Int96 i96[2];
    uint8_t b[192];
    EXPECT_FALSE(PlainDecoder(in.view()).DecodeInt64(3, i64).ok()) << cut;
    EXPECT_FALSE(PlainDecoder(in.view()).DecodeInt96(2, i96).ok()) << cut;
    EXPECT_FALSE(PlainDecoder(in.view()).DecodeBooleans(192, b).ok()) << cut;
  }
}

}  // namespace
}  // namespace sluice::parquet

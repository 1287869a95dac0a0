#include "formats/parquet/encoding/lz4_raw.h"

#include <gtest/gtest.h>
#include <lz4.h>

#include <string>

#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

using test::Bytes;
using test::ExactCopy;

std::string Compress(const std::string& raw) {
  std::string out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))), '\0');
  const int n = LZ4_compress_default(raw.data(), out.data(), static_cast<int>(raw.size()),
                                     static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Page() {
  std::string s;
  for (int i = 0; i < 5000; ++i) s += "row " + std::to_string(i % 97) + ";";
  return s;
}

TEST(Lz4RawTest, HandMadeBlock) {
  // One sequence of literals only: token 0x50 (5 literals, no match).
  auto out = DecompressLz4Raw(Bytes({0x50, 'h', 'e', 'l', 'l', 'o'}), 5, "page 0");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "hello");
  // Literals "ab", then a match at offset 2 of 4 + 4 bytes, then the
  // final 5 literals "ababa".
  out = DecompressLz4Raw(Bytes({0x24, 'a', 'b', 0x02, 0x00, 0x50, 'a', 'b', 'a', 'b', 'a'}), 15,
                         "page 0");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "abababababababa");
}

TEST(Lz4RawTest, RoundTripsIntoAReusedBuffer) {
  const std::string raw = Page();
  const ExactCopy packed(Compress(raw));
  std::string buffer;
  ASSERT_TRUE(DecompressLz4RawInto(packed.view(), raw.size(), "page 1", &buffer).ok());
  EXPECT_EQ(buffer, raw);
  ASSERT_TRUE(DecompressLz4RawInto(Compress("xy"), 2, "page 2", &buffer).ok());
  EXPECT_EQ(buffer, "xy");
}

TEST(Lz4RawTest, WrongExpectedSizesGiveErrors) {
  const std::string raw = Page();
  const std::string packed = Compress(raw);
  EXPECT_EQ(DecompressLz4Raw(packed, raw.size() + 1, "f.parquet page 3").status().ToString(),
            "corrupt: f.parquet page 3: LZ4_RAW data decompresses to " +
                std::to_string(raw.size()) + " bytes; expected exactly " +
                std::to_string(raw.size() + 1) + " (the page header's uncompressed size)");
  EXPECT_EQ(DecompressLz4Raw(packed, raw.size() - 1, "p").status().ToString(),
            "corrupt: p: LZ4_RAW data decompresses to more than the expected " +
                std::to_string(raw.size() - 1) + " bytes");
}

TEST(Lz4RawTest, ImpossibleSizesFailBeforeAllocating) {
  // 10 bytes cannot make more than 2,550: a 1 TiB claim is refused at once.
  EXPECT_EQ(DecompressLz4Raw("0123456789", uint64_t{1} << 40, "p").status().ToString(),
            "corrupt: p: LZ4_RAW data of 10 bytes cannot decompress to 1099511627776 bytes (an "
            "LZ4 block expands at most 255 times, to at most 2 GiB)");
  EXPECT_EQ(DecompressLz4Raw("", 1, "p").status().ToString(),
            "corrupt: p: LZ4_RAW data of 0 bytes cannot decompress to 1 bytes (an LZ4 block "
            "expands at most 255 times, to at most 2 GiB)");
  // The densest block there is (one literal, then a maximal match) stays
  // under the bound the check assumes.
  const std::string zeros(1 << 20, '\0');
  const std::string packed = Compress(zeros);
  EXPECT_LE(zeros.size(), 255 * packed.size());
  auto out = DecompressLz4Raw(packed, zeros.size(), "p");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
}

TEST(Lz4RawTest, TruncationAtEveryByteIsAnError) {
  const std::string raw = Page().substr(0, 3000);
  const std::string packed = Compress(raw);
  for (size_t cut = 0; cut < packed.size(); ++cut) {
    const ExactCopy in(std::string_view(packed).substr(0, cut));
    auto out = DecompressLz4Raw(in.view(), raw.size(), "p");
    ASSERT_FALSE(out.ok()) << cut;
    ASSERT_EQ(out.status().message().rfind("p: LZ4_RAW data ", 0), 0u) << out.status().message();
  }
  // A corrupt offset: a match reaching before the start.
  EXPECT_EQ(DecompressLz4Raw(Bytes({0x14, 'a', 0x09, 0x00, 0x50, 'a', 'b', 'c', 'd', 'e'}), 14,
                             "p")
                .status()
                .ToString(),
            "corrupt: p: LZ4_RAW data is corrupt or truncated: liblz4 stopped at input offset 4 "
            "of 10 (expected 14 bytes of output)");
}

}  // namespace
}  // namespace sluice::parquet

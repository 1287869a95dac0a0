// SnappyPrefix: a block decompressed a prefix at a time gives exactly
// libsnappy's bytes, writes no further than the tag that reaches the bytes
// asked for, and refuses what Decompress refuses where the output reaches it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "formats/codec/compression.h"
#include "formats/codec/snappy_prefix.h"

namespace sluice {
namespace {

const Compression& PrefixSnappy() {
  static const Compression c = *ParseCompression("snappy");
  return c;
}

// Words with repeats (copies, overlapping ones too) and a few random runs
// (long literals): the tags of text as a dictionary page stores it.
std::string PrefixText(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n) {
    switch (rng() % 4) {
      case 0: {
        // Drawn one by one: an argument list's order is the compiler's
        // (GCC and Clang differ), and the text must be one for both.
        const char c = static_cast<char>('a' + rng() % 26);
        const size_t count = 1 + rng() % 40;
        s.append(count, c);
        break;
      }
      case 1:
        for (size_t i = 0, k = 100 + rng() % 300; i < k; ++i) s += static_cast<char>(rng());
        break;
      default: s += "word" + std::to_string(rng() % 50) + ' '; break;
    }
  }
  s.resize(n);
  return s;
}

TEST(SnappyPrefix, PrefixesInAnyStepsAreLibsnappysBytes) {
  for (const size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{300000}}) {
    const std::string raw = PrefixText(n, static_cast<uint32_t>(n));
    const std::string block = *Compress(PrefixSnappy(), raw);
    for (const uint64_t step : {uint64_t{1}, uint64_t{7}, uint64_t{4096}, uint64_t{1} << 40}) {
      std::string out(raw.size() + 1, '#');
      SnappyPrefix prefix;
      ASSERT_TRUE(prefix.Start(block, out.data(), raw.size()));
      ASSERT_EQ(prefix.size(), raw.size());
      EXPECT_TRUE(prefix.DecodeTo(0));
      uint64_t want = 0;
      while (prefix.produced() < raw.size()) {
        want += step;
        ASSERT_TRUE(prefix.DecodeTo(want)) << n << " step " << step;
        ASSERT_GE(prefix.produced(), std::min<uint64_t>(want, raw.size()));
        // Whole tags only: at most one tag (libsnappy's literals stay within
        // its 64 KiB fragments) past what was asked.
        ASSERT_LE(prefix.produced(), std::min<uint64_t>(want + 65536, raw.size()));
        ASSERT_EQ(out.substr(0, prefix.produced()), raw.substr(0, prefix.produced()));
        ASSERT_EQ(out[prefix.produced()], '#') << "nothing written past the tags decoded";
      }
      EXPECT_EQ(out.substr(0, raw.size()), raw);
    }
  }
}

TEST(SnappyPrefix, RefusesWhatDecompressRefusesWhereTheOutputReachesIt) {
  const std::string raw = PrefixText(5000, 3);
  const std::string block = *Compress(PrefixSnappy(), raw);
  std::string out(raw.size() + 64, '\0');
  SnappyPrefix prefix;
  // A header that declares more than the room.
  EXPECT_FALSE(prefix.Start(block, out.data(), raw.size() - 1));
  EXPECT_FALSE(prefix.DecodeTo(1));
  // Cut short: its start decodes, its end does not, and then nothing does.
  const std::string cut = block.substr(0, block.size() - 3);
  ASSERT_TRUE(prefix.Start(cut, out.data(), out.size()));
  EXPECT_TRUE(prefix.DecodeTo(100));
  EXPECT_FALSE(prefix.DecodeTo(raw.size()));
  EXPECT_FALSE(prefix.DecodeTo(100));
  EXPECT_FALSE(Decompress(PrefixSnappy(), cut, out.size(), "cut").ok());
  // A byte after the last tag: refused once the end is reached.
  const std::string longer = block + 'x';
  ASSERT_TRUE(prefix.Start(longer, out.data(), out.size()));
  EXPECT_TRUE(prefix.DecodeTo(raw.size() / 2));
  EXPECT_FALSE(prefix.DecodeTo(raw.size()));
  EXPECT_FALSE(Decompress(PrefixSnappy(), longer, out.size(), "longer").ok());
  // A copy reaching before the start: 4 bytes, then a copy of 4 from 8 back.
  const std::string back = std::string("\x08\x0c" "abcd" "\x01\x08", 8);
  ASSERT_TRUE(Decompress(PrefixSnappy(), std::string("\x08\x0c" "abcd" "\x01\x04", 8), 8, "ok").ok());
  EXPECT_FALSE(Decompress(PrefixSnappy(), back, 8, "back").ok());
  ASSERT_TRUE(prefix.Start(back, out.data(), out.size()));
  EXPECT_TRUE(prefix.DecodeTo(4));
  EXPECT_FALSE(prefix.DecodeTo(5));
}

}  // namespace
}  // namespace sluice

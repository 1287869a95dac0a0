#include "formats/codec/compression.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/formats/codec/codec_test_util.h"

namespace sluice {
namespace {

using testing::TestBytes;

TEST(ParseCompression, FamiliesAndLevels) {
  struct Case {
    const char* name;
    const char* family;
    std::optional<int> level;
  };
  const Case cases[] = {
      {"zstd", "zstd", std::nullopt}, {"zstd:1", "zstd", 1},   {"zstd:19", "zstd", 19},
      {"zstd:22", "zstd", 22},        {"br", "br", std::nullopt}, {"br:0", "br", 0},
      {"br:5", "br", 5},              {"br:11", "br", 11},     {"gz", "gz", std::nullopt},
      {"gz:0", "gz", 0},              {"gz:6", "gz", 6},       {"gz:9", "gz", 9},
      {"bz2", "bz2", std::nullopt},   {"bz2:1", "bz2", 1},     {"bz2:9", "bz2", 9},
      {"snappy", "snappy", std::nullopt},
  };
  for (const Case& c : cases) {
    auto parsed = ParseCompression(c.name);
    ASSERT_TRUE(parsed.ok()) << c.name << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->family, c.family);
    EXPECT_EQ(parsed->level, c.level) << c.name;
    EXPECT_EQ(parsed->name, c.name);
    EXPECT_EQ(CompressionExtension(*parsed), c.family);
  }
}

TEST(ParseCompression, UnknownFamily) {
  for (const char* name : {"lz4", "", "gzip", "ZSTD", "zstd19", "brotli:5", ":3"}) {
    auto parsed = ParseCompression(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), StatusCode::kUnimplemented) << name;
  }
  EXPECT_EQ(ParseCompression("lz4:1").status().message(),
            "unknown compression \"lz4:1\" (supported: br, bz2, gz, snappy, zstd)");
}

TEST(ParseCompression, BadLevels) {
  for (const char* name : {"zstd:0", "zstd:23", "zstd:-1", "zstd:", "zstd:03", "zstd:+3",
                           "zstd: 3", "zstd:3 ", "zstd:3:4", "zstd:99999999999", "br:12",
                           "br:-0", "gz:10", "bz2:0", "bz2:10", "bz2:x"}) {
    auto parsed = ParseCompression(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(ParseCompression("zstd:23").status().message(),
            "compression \"zstd:23\": level must be 1-22 for zstd");
  EXPECT_EQ(ParseCompression("br:12").status().message(),
            "compression \"br:12\": level must be 0-11 for br");
  EXPECT_EQ(ParseCompression("gz:10").status().message(),
            "compression \"gz:10\": level must be 0-9 for gz");
  EXPECT_EQ(ParseCompression("bz2:0").status().message(),
            "compression \"bz2:0\": level must be 1-9 for bz2");
  auto snappy = ParseCompression("snappy:1");
  EXPECT_EQ(snappy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(snappy.status().message(), "compression \"snappy:1\": snappy takes no level");
}

// A Compression built by hand is validated as well.
TEST(Compression, HandBuiltIsValidated) {
  Compression c{"zstd", 30, "zstd:30"};
  auto out = Compress(c, "abc");
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "compression zstd level 30 is out of range 1-22");

  Compression lz4{"lz4", std::nullopt, "lz4"};
  auto d = Decompress(lz4, "abc", 10, "shard.00000.mds.lz4");
  EXPECT_EQ(d.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(d.status().message(),
            "shard.00000.mds.lz4: unknown compression \"lz4\" (supported: br, bz2, gz, snappy, "
            "zstd)");

  Compression snappy{"snappy", 1, "snappy:1"};
  EXPECT_EQ(Compress(snappy, "abc").status().message(),
            "compression snappy takes no level, got 1");
}

std::vector<std::string> AllNames() {
  std::vector<std::string> names = {"zstd", "br", "gz", "bz2", "snappy"};
  for (int l = 1; l <= 22; ++l) names.push_back("zstd:" + std::to_string(l));
  for (int l = 0; l <= 11; ++l) names.push_back("br:" + std::to_string(l));
  for (int l = 0; l <= 9; ++l) names.push_back("gz:" + std::to_string(l));
  for (int l = 1; l <= 9; ++l) names.push_back("bz2:" + std::to_string(l));
  return names;
}

TEST(Compression, RoundTripEveryFamilyAndLevel) {
  const std::vector<std::string> inputs = {
      "", "a", std::string(1, '\0'), TestBytes(1000, 2), std::string(100000, 'z'),
      TestBytes(70000, 3)};
  for (const std::string& name : AllNames()) {
    auto c = ParseCompression(name);
    ASSERT_TRUE(c.ok()) << name;
    for (const std::string& raw : inputs) {
      auto packed = Compress(*c, raw);
      ASSERT_TRUE(packed.ok()) << name << ": " << packed.status().ToString();
      if (raw.size() >= 70000 && name != "gz:0") {
        EXPECT_LT(packed->size(), raw.size()) << name;
      }
      auto unpacked = Decompress(*c, *packed, raw.size(), "round trip");
      ASSERT_TRUE(unpacked.ok()) << name << " size " << raw.size() << ": "
                                 << unpacked.status().ToString();
      EXPECT_TRUE(*unpacked == raw) << name << " size " << raw.size();
      // A generous limit is fine too: the limit is a bound, not the size.
      auto loose = Decompress(*c, *packed, raw.size() + 12345, "round trip");
      ASSERT_TRUE(loose.ok()) << name;
      EXPECT_TRUE(*loose == raw) << name;
    }
  }
}

// Output that needs several buffer growths in every streaming decoder.
TEST(Compression, RoundTripLargeInput) {
  const std::string raw = TestBytes(5 << 20, 7);
  for (const char* name : {"zstd", "br:5", "gz:6", "bz2:1", "snappy"}) {
    auto c = ParseCompression(name);
    ASSERT_TRUE(c.ok());
    auto packed = Compress(*c, raw);
    ASSERT_TRUE(packed.ok()) << name;
    auto unpacked = Decompress(*c, *packed, raw.size(), name);
    ASSERT_TRUE(unpacked.ok()) << name << ": " << unpacked.status().ToString();
    EXPECT_TRUE(*unpacked == raw) << name;
  }
}

// Levels change the bytes: the level really reaches the library.
TEST(Compression, LevelsReachTheLibrary) {
  const std::string raw = TestBytes(200000, 9);
  for (const auto& [low, high] : std::vector<std::pair<const char*, const char*>>{
           {"zstd:1", "zstd:19"}, {"br:0", "br:11"}, {"gz:1", "gz:9"}, {"bz2:1", "bz2:9"}}) {
    auto a = Compress(*ParseCompression(low), raw);
    auto b = Compress(*ParseCompression(high), raw);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(*a, *b) << low << " vs " << high;
  }
  // gz:0 stores: output is larger than the input.
  auto stored = Compress(*ParseCompression("gz:0"), raw);
  ASSERT_TRUE(stored.ok());
  EXPECT_GT(stored->size(), raw.size());
  // Defaults are Mosaic's: zstd 3, br 11, gz 9, bz2 9.
  for (const auto& [bare, explicit_level] : std::vector<std::pair<const char*, const char*>>{
           {"zstd", "zstd:3"}, {"br", "br:11"}, {"gz", "gz:9"}, {"bz2", "bz2:9"}}) {
    auto a = Compress(*ParseCompression(bare), raw);
    auto b = Compress(*ParseCompression(explicit_level), raw);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b) << bare << " vs " << explicit_level;
  }
}

std::string Hex(const std::string& s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string h;
  for (unsigned char ch : s) {
    h.push_back(kDigits[ch >> 4]);
    h.push_back(kDigits[ch & 15]);
  }
  return h;
}

// Python 3.11: gzip.compress(data, level, mtime=1) with the mtime bytes
// zeroed, and bz2.compress(data, 9).
TEST(Compression, ExactBytesLikePython) {
  const std::string hello = "hello hello hello";
  EXPECT_EQ(Hex(*Compress(*ParseCompression("gz"), hello)),
            "1f8b08000000000002ffcb48cdc9c957c84090008088f9e511000000");
  EXPECT_EQ(Hex(*Compress(*ParseCompression("gz:9"), "")),
            "1f8b08000000000002ff03000000000000000000");
  EXPECT_EQ(Hex(*Compress(*ParseCompression("gz:1"), "")),
            "1f8b08000000000004ff03000000000000000000");
  EXPECT_EQ(Hex(*Compress(*ParseCompression("gz:0"), "ab")),
            "1f8b08000000000000ff010200fdff61626d48839e02000000");
  EXPECT_EQ(Hex(*Compress(*ParseCompression("bz2"), hello)),
            "425a68393141592653599e625bfe000002910040000244a000211460668291ef23470bb9229c28484f"
            "312dff00");
}

}  // namespace
}  // namespace sluice

// DecompressInto: the caller's buffer receives exactly the output, bytes
// past it are untouched (but by zstd), and limits and errors are
// Decompress's.
#include <gtest/gtest.h>

#include <string>

#include "formats/codec/compression.h"
#include "tests/formats/codec/codec_test_util.h"

namespace sluice {
namespace {

using testing::TestBytes;

TEST(DecompressInto, WritesTheOutputAndLeavesTheRestOfTheBuffer) {
  const std::string raw = TestBytes(5000);
  for (const char* family : {"zstd", "br", "gz", "bz2", "snappy"}) {
    SCOPED_TRACE(family);
    const Compression c = *ParseCompression(family);
    const std::string packed = *Compress(c, raw);
    std::string buffer(raw.size() + 16, '#');
    Result<uint64_t> n = DecompressInto(c, packed, buffer.data(), buffer.size(), "f");
    ASSERT_TRUE(n.ok()) << n.status().message();
    EXPECT_EQ(*n, raw.size());
    EXPECT_EQ(buffer.substr(0, raw.size()), raw);
    if (std::string_view(family) != "zstd") {
      EXPECT_EQ(buffer.substr(raw.size()), std::string(16, '#'));
    }
  }
}

// Decoded without walking the tags first: a damaged block still fails with
// Decompress's error.
TEST(DecompressInto, SnappyDamagedBlocksFailAsDecompressDoes) {
  const Compression c = *ParseCompression("snappy");
  const std::string raw = TestBytes(3000);
  const std::string packed = *Compress(c, raw);
  std::string bad_offset = std::string("\x08\x0c" "abcd" "\x01\x00", 8);  // a copy from offset 0
  std::string far_offset = std::string("\x08\x0c" "abcd" "\x01\x09", 8);  // before the start
  for (const std::string& damaged :
       {packed.substr(0, packed.size() - 1), packed + std::string(1, '\0'), packed + "\x0c" "abcd",
        bad_offset, far_offset, std::string("\x80", 1), std::string("\x08\x1c" "abc", 5)}) {
    std::string buffer(raw.size() + 8, '#');
    Result<uint64_t> n = DecompressInto(c, damaged, buffer.data(), buffer.size(), "f");
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().message(), Decompress(c, damaged, buffer.size(), "f").status().message());
  }
}

TEST(DecompressInto, SnappyLargerThanTheBufferIsRefusedBeforeWriting) {
  const Compression c = *ParseCompression("snappy");
  const std::string packed = *Compress(c, TestBytes(100));
  std::string buffer(99, '#');
  Result<uint64_t> n = DecompressInto(c, packed, buffer.data(), buffer.size(), "f");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(),
            "f: snappy data is corrupt: the header declares 100 bytes, more than the expected "
            "raw size of 99");
  EXPECT_EQ(buffer, std::string(99, '#'));
}

// zstd decodes in place and may have written part of the buffer when it
// fails; the error is Decompress's.
TEST(DecompressInto, OtherFamiliesKeepDecompressLimitAndErrors) {
  for (const char* family : {"zstd", "br", "gz", "bz2"}) {
    SCOPED_TRACE(family);
    const Compression c = *ParseCompression(family);
    const std::string packed = *Compress(c, TestBytes(100));
    std::string buffer(99, '#');
    Result<uint64_t> n = DecompressInto(c, packed, buffer.data(), buffer.size(), "f");
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().message(), Decompress(c, packed, 99, "f").status().message());
    std::string damaged = packed;
    damaged.resize(damaged.size() - 3);
    n = DecompressInto(c, damaged, buffer.data(), buffer.size() + 1, "f");
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.status().message(), Decompress(c, damaged, 100, "f").status().message());
  }
}

TEST(DecompressInto, ZstdConcatenatedFramesDecodeWhole) {
  const Compression c = *ParseCompression("zstd");
  const std::string a = TestBytes(300), b = TestBytes(200);
  const std::string packed = *Compress(c, a) + *Compress(c, b);
  std::string buffer(600, '#');
  Result<uint64_t> n = DecompressInto(c, packed, buffer.data(), buffer.size(), "f");
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(*n, 500u);
  EXPECT_EQ(buffer.substr(0, 500), a + b);  // libzstd may use the rest as scratch
}

// A caller holding Decompress's string saves a copy for every family but
// those DecompressInto decodes straight into the buffer.
TEST(DecompressInto, DecodesStraightIntoTheBufferForSnappyAndZstdOnly) {
  for (const char* family : {"zstd", "zstd:7", "snappy"}) {
    EXPECT_TRUE(DecompressesStraightInto(*ParseCompression(family))) << family;
  }
  for (const char* family : {"br", "gz", "bz2"}) {
    EXPECT_FALSE(DecompressesStraightInto(*ParseCompression(family))) << family;
  }
  EXPECT_FALSE(DecompressesStraightInto(Compression{"nonesuch", std::nullopt, "nonesuch"}));
}

}  // namespace
}  // namespace sluice

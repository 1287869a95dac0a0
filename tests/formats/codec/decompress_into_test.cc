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

}  // namespace
}  // namespace sluice

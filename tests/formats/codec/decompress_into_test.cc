// DecompressInto: the caller's buffer receives exactly the output, bytes
// past it are untouched, and limits and errors are Decompress's.
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
    EXPECT_EQ(buffer.substr(raw.size()), std::string(16, '#'));
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

TEST(DecompressInto, StreamingFamiliesKeepDecompressLimit) {
  const Compression c = *ParseCompression("zstd");
  const std::string packed = *Compress(c, TestBytes(100));
  std::string buffer(99, '#');
  Result<uint64_t> n = DecompressInto(c, packed, buffer.data(), buffer.size(), "f");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(), Decompress(c, packed, 99, "f").status().message());
  EXPECT_EQ(buffer, std::string(99, '#'));
}

}  // namespace
}  // namespace sluice

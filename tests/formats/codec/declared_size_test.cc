// Declared sizes never drive allocations: a zstd frame stating 1 TiB and
// gz/br/bz2 bombs paired with a claimed raw size of 1 TiB give an error
// within a small address-space budget, never an abort or a huge buffer.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <string>

#include "formats/codec/compression.h"
#include "tests/base/address_limit.h"
#include "tests/formats/codec/codec_test_util.h"

namespace sluice {
namespace {

using testing::kAddressLimitWorks;
using testing::RunWithAddressLimit;

constexpr uint64_t kTiB = uint64_t{1} << 40;
constexpr uint64_t kHeadroom = 64 << 20;   // address space a child may add
constexpr size_t kBombPart = 16 << 20;     // zeros per gz member / bz2 stream
constexpr size_t kBombParts = 16;          // 256 MiB of output in all

// "<code>: <message>" of Decompress's result, or "ok <size>".
std::string Outcome(const char* family, const std::string& data, uint64_t max_output,
                    const std::string& what) {
  auto out = Decompress(*ParseCompression(family), data, max_output, what);
  if (out.ok()) return "ok " + std::to_string(out->size());
  return out.status().ToString();
}

// 256 MiB of zeros in a few hundred KiB (gz, bz2: repeated members/streams)
// or a few KiB (br, one stream).
std::string Bomb(const char* family) {
  const Compression c = *ParseCompression(family);
  if (std::string(family) == "br") {
    return *Compress(*ParseCompression("br:1"), std::string(kBombPart * kBombParts, '\0'));
  }
  const std::string part = *Compress(c, std::string(kBombPart, '\0'));
  std::string bomb;
  for (size_t i = 0; i < kBombParts; ++i) bomb += part;
  return bomb;
}

// Zstd frame header fields (RFC 8878 3.1.1.1) around one RLE block of
// `block` bytes: 17 bytes when single-segment, 18 with a 1 MiB window.
std::string ZstdFrameDeclaring(uint64_t content_size, bool single_segment, bool last,
                               uint32_t block) {
  std::string f("\x28\xb5\x2f\xfd", 4);
  f.push_back(static_cast<char>(single_segment ? 0xE0 : 0xC0));  // 8-byte size
  if (!single_segment) f.push_back(static_cast<char>(10 << 3));  // window 2^20
  for (int i = 0; i < 8; ++i) f.push_back(static_cast<char>(content_size >> (8 * i)));
  const uint32_t header = (last ? 1u : 0u) | (1u << 1) | (block << 3);  // RLE
  for (int i = 0; i < 3; ++i) f.push_back(static_cast<char>(header >> (8 * i)));
  f.push_back('x');
  return f;
}

TEST(DeclaredSize, ZstdFrameDeclaringOneTiBIsRefusedWithoutAllocatingIt) {
  if (!kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  const std::string tiny = ZstdFrameDeclaring(kTiB, true, true, 1);
  ASSERT_EQ(tiny.size(), 17u);
  // Single segment: the window is the whole declared content.
  EXPECT_EQ(RunWithAddressLimit(kHeadroom, [&] { return Outcome("zstd", tiny, kTiB, "t.zst"); }),
            "corrupt: t.zst: zstd data is corrupt: Frame requires too much memory for decoding "
            "(in the frame at input offset 0)");
  // A 1 MiB window: the 128 KiB that exist are decoded, then the input ends.
  const std::string cut = ZstdFrameDeclaring(kTiB, false, false, 128 << 10);
  EXPECT_EQ(RunWithAddressLimit(kHeadroom, [&] { return Outcome("zstd", cut, kTiB, "c.zst"); }),
            "corrupt: c.zst: zstd data is truncated: the input ends (18 bytes) before the end "
            "of the frame, after 131072 output bytes");
  // Declaring exactly the largest shard file changes nothing.
  const uint64_t max_shard = UINT32_MAX;
  const std::string big = ZstdFrameDeclaring(max_shard, true, true, 1);
  EXPECT_EQ(RunWithAddressLimit(kHeadroom, [&] { return Outcome("zstd", big, max_shard, "b.zst"); }),
            "corrupt: b.zst: zstd data is corrupt: Frame requires too much memory for decoding "
            "(in the frame at input offset 0)");
}

// The bombs expand to 256 MiB; the child may add 64 MiB. The output grows
// until memory runs out, which is a Status (kIoError), not an abort.
TEST(DeclaredSize, BombsClaimingOneTiBRunOutOfMemoryAsAStatus) {
  if (!kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  for (const char* family : {"gz", "br", "bz2"}) {
    const std::string bomb = Bomb(family);
    const std::string what = std::string("bomb.") + family;
    EXPECT_EQ(RunWithAddressLimit(kHeadroom, [&] { return Outcome(family, bomb, kTiB, what); }),
              "i/o error: " + what + ": " + family + " data of " + std::to_string(bomb.size()) +
                  " bytes, decompressing to at most 1099511627776: out of memory "
                  "(std::bad_alloc)")
        << family;
  }
}

// With a limit (the index's raw size, capped by the format) the same bombs
// stop at it: memory never goes past the limit, whatever the input claims.
TEST(DeclaredSize, BombsStopAtTheLimitWithinItsMemory) {
  if (!kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  constexpr uint64_t kLimit = 8 << 20;
  for (const char* family : {"gz", "br", "bz2"}) {
    const std::string bomb = Bomb(family);
    EXPECT_EQ(RunWithAddressLimit(kHeadroom, [&] { return Outcome(family, bomb, kLimit, "b"); }),
              "corrupt: b: " + std::string(family) +
                  " data decompresses to more than 8388608 bytes (the expected raw size)")
        << family;
  }
}

// Honest data far more compressible than the start ratio still decodes
// exactly, through buffers that grow (zstd: the streaming path, which used
// to call a frame ending at a buffer's end truncated).
TEST(DeclaredSize, HighlyCompressibleDataDecodesExactly) {
  const std::string raw = std::string(3 << 20, '\0') + testing::TestBytes(1000, 9);
  for (const char* family : {"zstd", "br", "gz", "bz2", "snappy"}) {
    auto packed = Compress(*ParseCompression(family), raw);
    ASSERT_TRUE(packed.ok()) << family;
    ASSERT_GT(raw.size(), 4 * packed->size()) << family;
    auto out = Decompress(*ParseCompression(family), *packed, raw.size(), "z");
    ASSERT_TRUE(out.ok()) << family << ": " << out.status().ToString();
    EXPECT_TRUE(*out == raw) << family;
  }
  // A zstd frame without its size whose output ends exactly where a buffer
  // does (1 MiB from 64 KiB doubled) is complete, not truncated.
  const std::string mib(1 << 20, 'a');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::string frame(ZSTD_compressBound(mib.size()), '\0');
  ZSTD_outBuffer ob{frame.data(), frame.size(), 0};
  ZSTD_inBuffer ib{mib.data(), mib.size(), 0};
  ASSERT_EQ(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  frame.resize(ob.pos);
  auto out = Decompress(*ParseCompression("zstd"), frame, 4 << 20, "u.zst");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == mib);
}

}  // namespace
}  // namespace sluice

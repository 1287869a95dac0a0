// Bad input to Decompress: truncated, corrupt, trailing bytes, too large.
// Every error is kCorrupt and names the file and what was expected.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

#include "formats/codec/compression.h"
#include "tests/formats/codec/codec_test_util.h"

namespace sluice {
namespace {

using testing::TestBytes;

const std::string kRaw = TestBytes(50000, 5);

std::string Packed(const char* name, const std::string& raw = kRaw) {
  auto out = Compress(*ParseCompression(name), raw);
  EXPECT_TRUE(out.ok());
  return *out;
}

Status DecompressError(const char* name, std::string_view data, uint64_t max_output,
                       std::string_view what) {
  auto out = Decompress(*ParseCompression(name), data, max_output, what);
  if (out.ok()) return InternalError("unexpectedly decompressed " + std::to_string(out->size()));
  return out.status();
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(DecompressErrors, TruncatedEveryFamily) {
  struct Case {
    const char* name;
    const char* prefix;  // deterministic start of the message
  };
  const Case cases[] = {
      {"zstd", "t.zstd: zstd data is truncated: the input ends ("},
      {"br", "t.br: br data is truncated: the input ends ("},
      {"gz", "t.gz: gz data is truncated: the input ends ("},
      {"bz2", "t.bz2: bz2 data is truncated: the input ends ("},
  };
  for (const Case& c : cases) {
    const std::string packed = Packed(c.name);
    const std::string what = std::string("t.") + c.name;
    for (size_t keep : {size_t{0}, size_t{1}, size_t{10}, packed.size() / 2, packed.size() - 1}) {
      Status s = DecompressError(c.name, packed.substr(0, keep), kRaw.size(), what);
      EXPECT_EQ(s.code(), StatusCode::kCorrupt) << c.name << " keep " << keep;
      EXPECT_TRUE(StartsWith(s.message(), c.prefix))
          << c.name << " keep " << keep << ": " << s.message();
    }
  }
  // The whole-input messages state the sizes.
  const std::string zstd = Packed("zstd");
  EXPECT_TRUE(StartsWith(
      DecompressError("zstd", zstd.substr(0, zstd.size() - 1), kRaw.size(), "t.zstd").message(),
      "t.zstd: zstd data is truncated: the input ends (" + std::to_string(zstd.size() - 1) +
          " bytes) before the end of the frame, after "));
  EXPECT_EQ(DecompressError("bz2", "", 10, "e.bz2").message(),
            "e.bz2: bz2 data is truncated: the input ends (0 bytes) before the end-of-stream "
            "marker, after 0 output bytes");
  EXPECT_EQ(DecompressError("gz", "", 10, "e.gz").message(),
            "e.gz: gz data is truncated: the input ends (0 bytes) before the end of the gzip "
            "member, after 0 output bytes");

  // Snappy: cut inside a tag, or between tags.
  const std::string snappy = Packed("snappy");
  for (size_t keep : {size_t{10}, snappy.size() / 2, snappy.size() - 1}) {
    Status st = DecompressError("snappy", snappy.substr(0, keep), kRaw.size(), "t.snappy");
    EXPECT_EQ(st.code(), StatusCode::kCorrupt);
    EXPECT_TRUE(StartsWith(st.message(), "t.snappy: snappy data is truncated: the input ends "))
        << keep << ": " << st.message();
  }
  // Header 5, one literal of 3 bytes: "abc", then the input ends.
  EXPECT_EQ(DecompressError("snappy", std::string("\x05\x08" "abc", 5), 10, "t.snappy").message(),
            "t.snappy: snappy data is truncated: the input ends after 3 of the 5 bytes the "
            "header declares");
  EXPECT_EQ(DecompressError("snappy", std::string("\x05\x10" "ab", 4), 10, "t.snappy").message(),
            "t.snappy: snappy data is truncated: the input ends inside the tag at offset 1, "
            "after 0 of 5 bytes");
  EXPECT_EQ(DecompressError("snappy", "", 10, "t.snappy").message(),
            "t.snappy: snappy data is truncated: the input (0 bytes) ends inside the length "
            "header");
  EXPECT_EQ(DecompressError("snappy", snappy.substr(0, 1), kRaw.size(), "t.snappy").message(),
            "t.snappy: snappy data is truncated: the input (1 bytes) ends inside the length "
            "header");
}

TEST(DecompressErrors, CorruptEveryFamily) {
  // zstd: a bad magic number.
  std::string zstd = Packed("zstd");
  zstd[0] ^= 0x55;
  EXPECT_EQ(DecompressError("zstd", zstd, kRaw.size(), "c.zstd").message(),
            "c.zstd: zstd data is corrupt: Unknown frame descriptor (in the frame at input offset 0)");

  // gz: the CRC-32 in the trailer.
  std::string gz = Packed("gz");
  gz[gz.size() - 6] ^= 1;
  Status s = DecompressError("gz", gz, kRaw.size(), "c.gz");
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_TRUE(StartsWith(s.message(), "c.gz: gz data is corrupt: incorrect data check"))
      << s.message();
  // gz: not a gzip header at all.
  s = DecompressError("gz", "hello, world", kRaw.size(), "c.gz");
  EXPECT_TRUE(StartsWith(s.message(), "c.gz: gz data is corrupt: incorrect header check"))
      << s.message();

  // bz2: a byte in the middle of the block breaks the block CRC.
  std::string bz2 = Packed("bz2");
  bz2[bz2.size() / 2] ^= 0x10;
  s = DecompressError("bz2", bz2, 100 * kRaw.size(), "c.bz2");
  EXPECT_TRUE(StartsWith(s.message(), "c.bz2: bz2 data is corrupt: data integrity error"))
      << s.message();
  s = DecompressError("bz2", "BZx91AY&SY", kRaw.size(), "c.bz2");
  EXPECT_TRUE(StartsWith(s.message(), "c.bz2: bz2 data is corrupt: bad stream magic"))
      << s.message();

  // br: an invalid window/metablock header.
  s = DecompressError("br", std::string(16, '\xff'), kRaw.size(), "c.br");
  EXPECT_EQ(s.message(), "c.br: br data is corrupt: PADDING_2 (near input offset 1)");

  // snappy: a length header longer than 5 bytes.
  s = DecompressError("snappy", std::string(8, '\xff'), kRaw.size(), "c.snappy");
  EXPECT_EQ(s.message(), "c.snappy: snappy data is corrupt: bad length header");
  // snappy: a copy (2-byte offset 7) before any byte exists, then one past the end.
  EXPECT_EQ(DecompressError("snappy", std::string("\x05\x06\x07\x00", 4), 10, "c.snappy")
                .message(),
            "c.snappy: snappy data is corrupt: the copy at offset 1 reaches back 7 bytes, but "
            "only 0 exist");
  EXPECT_EQ(DecompressError("snappy", std::string("\x02\x08" "abc", 5), 10, "c.snappy").message(),
            "c.snappy: snappy data is corrupt: the tag at offset 1 goes past the 2 bytes the "
            "header declares");
}

// Whatever single byte is damaged, decoding fails cleanly or yields at most
// max_output bytes (run under ASan/UBSan in CI).
TEST(DecompressErrors, EverySingleByteMutationIsSafe) {
  const std::string raw = TestBytes(3000, 11);
  for (const char* name : {"zstd", "br", "gz", "bz2", "snappy"}) {
    const std::string packed = Packed(name, raw);
    for (size_t i = 0; i < packed.size(); ++i) {
      for (unsigned char flip : {0x01, 0x80, 0xff}) {
        std::string bad = packed;
        bad[i] = static_cast<char>(bad[i] ^ flip);
        auto out = Decompress(*ParseCompression(name), bad, raw.size(), "m");
        if (out.ok()) {
          EXPECT_LE(out->size(), raw.size()) << name << " byte " << i;
        } else {
          EXPECT_EQ(out.status().code(), StatusCode::kCorrupt)
              << name << " byte " << i << ": " << out.status().ToString();
        }
      }
    }
  }
}

TEST(DecompressErrors, TrailingBytes) {
  const std::string zstd = Packed("zstd");
  EXPECT_EQ(DecompressError("zstd", zstd + "garbage!", kRaw.size(), "g.zstd").message(),
            "g.zstd: 8 bytes of trailing data after the zstd stream that ends at offset " +
                std::to_string(zstd.size()) +
                " (expected another zstd frame or the end of the file; Unknown frame "
                "descriptor)");
  EXPECT_EQ(DecompressError("zstd", zstd + "ga", kRaw.size(), "g.zstd").message(),
            "g.zstd: 2 bytes of trailing data after the zstd stream that ends at offset " +
                std::to_string(zstd.size()) +
                " (expected another zstd frame or the end of the file; Unknown frame "
                "descriptor)");
  // The start of a second frame (magic and part of its header).
  EXPECT_EQ(DecompressError("zstd", zstd + zstd.substr(0, 6), kRaw.size(), "g.zstd").message(),
            "g.zstd: zstd data is truncated: the 6 bytes after the frame that ends at offset " +
                std::to_string(zstd.size()) + " are an incomplete frame");

  const std::string br = Packed("br");
  EXPECT_EQ(DecompressError("br", br + "x", kRaw.size(), "g.br").message(),
            "g.br: 1 bytes of trailing data after the br stream that ends at offset " +
                std::to_string(br.size()) + " (expected the end of the file)");

  const std::string gz = Packed("gz");
  EXPECT_EQ(DecompressError("gz", gz + "xyz", kRaw.size(), "g.gz").message(),
            "g.gz: 3 bytes of trailing data after the gz stream that ends at offset " +
                std::to_string(gz.size()) +
                " (expected another gzip member (1f 8b) or the end of the file)");
  EXPECT_EQ(DecompressError("gz", gz + std::string(3, '\0') + "x", kRaw.size(), "g.gz").message(),
            "g.gz: 4 bytes of trailing data after the gz stream that ends at offset " +
                std::to_string(gz.size()) +
                " (expected another gzip member (1f 8b) or the end of the file)");

  const std::string bz2 = Packed("bz2");
  EXPECT_EQ(DecompressError("bz2", bz2 + "BZ!", kRaw.size(), "g.bz2").message(),
            "g.bz2: 3 bytes of trailing data after the bz2 stream that ends at offset " +
                std::to_string(bz2.size()) +
                " (expected another bzip2 stream (\"BZh\") or the end of the file)");

  const std::string snappy = Packed("snappy");
  for (const std::string& extra : {std::string(1, '\0'), std::string("\x08" "xy", 3)}) {
    EXPECT_EQ(DecompressError("snappy", snappy + extra, kRaw.size(), "g.snappy").message(),
              "g.snappy: " + std::to_string(extra.size()) +
                  " bytes of trailing data after the snappy stream that ends at offset " +
                  std::to_string(snappy.size()) +
                  " (the header's 50000 bytes are complete; expected the end of the file)");
  }
}

TEST(DecompressErrors, OutputLargerThanMaxOutput) {
  const std::string raw(1 << 20, 'a');  // a decompression bomb in miniature
  // Families whose header states the size are refused before decoding.
  EXPECT_EQ(DecompressError("zstd", Packed("zstd", raw), 1000, "b.zstd").message(),
            "b.zstd: zstd data is corrupt: the frame header declares 1048576 bytes, more than "
            "the expected raw size of 1000");
  EXPECT_EQ(DecompressError("snappy", Packed("snappy", raw), 1000, "b.snappy").message(),
            "b.snappy: snappy data is corrupt: the header declares 1048576 bytes, more than the "
            "expected raw size of 1000");
  for (const char* name : {"br", "gz", "bz2"}) {
    for (uint64_t limit : {uint64_t{0}, uint64_t{1000}, uint64_t{(1 << 20) - 1}}) {
      EXPECT_EQ(DecompressError(name, Packed(name, raw), limit, "b").message(),
                "b: " + std::string(name) + " data decompresses to more than " +
                    std::to_string(limit) + " bytes (the expected raw size)");
    }
  }
  // Exactly the limit is fine, empty output with limit 0 too.
  for (const char* name : {"zstd", "br", "gz", "bz2", "snappy"}) {
    auto out = Decompress(*ParseCompression(name), Packed(name, raw), raw.size(), "b");
    ASSERT_TRUE(out.ok()) << name;
    EXPECT_EQ(out->size(), raw.size());
    auto empty = Decompress(*ParseCompression(name), Packed(name, ""), 0, "e");
    ASSERT_TRUE(empty.ok()) << name << ": " << empty.status().ToString();
    EXPECT_EQ(*empty, "");
  }
}

// zstd frames without a stated size go through the streaming decoder, which
// also bounds its output.
std::string ZstdWithoutContentSize(const std::string& raw) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  ZSTD_inBuffer ib{raw.data(), raw.size(), 0};
  const size_t r = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
  EXPECT_EQ(r, 0u);
  ZSTD_freeCCtx(cctx);
  out.resize(ob.pos);
  return out;
}

TEST(ZstdFrames, UnknownSizeConcatenatedAndSkippable) {
  const std::string a = TestBytes(200000, 21), b = TestBytes(1000, 22);
  const std::string fa = ZstdWithoutContentSize(a);
  EXPECT_EQ(ZSTD_getFrameContentSize(fa.data(), fa.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  const Compression zstd = *ParseCompression("zstd");

  auto out = Decompress(zstd, fa, a.size(), "u");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a);
  EXPECT_EQ(DecompressError("zstd", fa, a.size() - 1, "u").message(),
            "u: zstd data decompresses to more than 199999 bytes (the expected raw size)");
  EXPECT_EQ(DecompressError("zstd", fa, 0, "u").message(),
            "u: zstd data decompresses to more than 0 bytes (the expected raw size)");

  // A skippable frame (magic 0x184D2A50, 4-byte length) between two frames.
  std::string skippable("\x50\x2a\x4d\x18\x03\x00\x00\x00xyz", 11);
  const std::string both = fa + skippable + *Compress(zstd, b);
  out = Decompress(zstd, both, a.size() + b.size(), "cat");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a + b);
  EXPECT_EQ(DecompressError("zstd", both, a.size() + b.size() - 1, "cat").code(),
            StatusCode::kCorrupt);

  // The checksum catches a damaged literal.
  std::string bad = ZstdWithoutContentSize(std::string(5000, 'q') + b);
  bad[bad.size() - 2] ^= 1;
  Status s = DecompressError("zstd", bad, 10000, "ck");
  EXPECT_EQ(s.message(), "ck: zstd data is corrupt: Restored data doesn't match checksum "
                         "(in the frame at input offset 0)");
}

// Gzip members as any tool may write them: optional header fields, several
// members, NUL padding (Python's gzip.decompress accepts all of these).
std::string GzipMember(const std::string& raw, bool all_header_fields) {
  std::string out("\x1f\x8b\x08", 3);
  const unsigned char flags = all_header_fields ? 0x1e : 0;  // FHCRC|FEXTRA|FNAME|FCOMMENT
  out.push_back(static_cast<char>(flags));
  out.append(std::string("\x00\x00\x00\x00\x02\x03", 6));  // mtime, XFL, OS
  if (all_header_fields) {
    out.append(std::string("\x04\x00" "ab\x00\x00", 6));    // XLEN=4 + extra
    out.append(std::string("name.mds\x00", 9));
    out.append(std::string("comment\x00", 8));
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(out.data()), out.size());
    out.push_back(static_cast<char>(crc & 0xff));
    out.push_back(static_cast<char>((crc >> 8) & 0xff));
  }
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string body(deflateBound(&z, raw.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(body.data());
  z.avail_out = static_cast<uInt>(body.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  body.resize(z.total_out);
  deflateEnd(&z);
  out += body;
  const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(raw.data()), raw.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((raw.size() >> (8 * i)) & 0xff));
  return out;
}

TEST(GzipMembers, HeaderFieldsMembersAndPadding) {
  const std::string a = TestBytes(30000, 31), b = TestBytes(777, 32);
  const Compression gz = *ParseCompression("gz");
  const std::string m1 = GzipMember(a, true);
  auto out = Decompress(gz, m1, a.size(), "h.gz");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a);

  const std::string two = m1 + std::string(5, '\0') + GzipMember(b, false) + std::string(2, '\0');
  out = Decompress(gz, two, a.size() + b.size(), "two.gz");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a + b);
  EXPECT_EQ(DecompressError("gz", two, a.size() + b.size() - 1, "two.gz").message(),
            "two.gz: gz data decompresses to more than 30776 bytes (the expected raw size)");

  // A second member cut inside its header.
  Status s = DecompressError("gz", m1 + "\x1f", a.size() + b.size(), "cut.gz");
  EXPECT_TRUE(StartsWith(s.message(), "cut.gz: gz data is truncated: ")) << s.message();

  // The ISIZE trailer must match.
  std::string bad_len = m1;
  bad_len[bad_len.size() - 1] ^= 1;
  s = DecompressError("gz", bad_len, a.size(), "len.gz");
  EXPECT_TRUE(StartsWith(s.message(), "len.gz: gz data is corrupt: incorrect length check"))
      << s.message();
}

TEST(Bzip2Streams, Concatenated) {
  const std::string a = TestBytes(30000, 41), b = TestBytes(500, 42);
  const std::string both = Packed("bz2", a) + Packed("bz2:1", b);
  auto out = Decompress(*ParseCompression("bz2"), both, a.size() + b.size(), "cat.bz2");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a + b);
  Status s = DecompressError("bz2", Packed("bz2", a) + "BZ", a.size() + b.size(), "cut.bz2");
  EXPECT_TRUE(StartsWith(s.message(), "cut.bz2: bz2 data is truncated: ")) << s.message();
}

}  // namespace
}  // namespace sluice

// The decompressors (formats/codec), one target per family: the build
// compiles this file once per SLUICE_FUZZ_CODEC ("zstd", "gz", "br", "bz2",
// "snappy").
//
// Input: one control byte, then the compressed file. Bit 0 of the control
// byte picks the bound: set, the largest shard the formats hold (4 GiB - 1,
// what ParseIndex lets raw_data.bytes say), so a stream declaring a huge
// size must still not allocate it (libFuzzer's -malloc_limit_mb, 2 GiB by
// default, turns such an allocation into a crash); clear, a small bound
// from the next two bytes, which the output must never exceed.
// Checks: the output never exceeds the bound, errors are kCorrupt naming the
// file (kIoError only for a failed allocation), and what decompressed
// compresses and decompresses back to the same bytes. snappy: whenever
// SnappyPieces (formats/parquet's in-place pages) gives pieces, Decompress
// succeeds with exactly their bytes, and each piece lies in the input or in
// the scratch bytes it used.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string>

#include "formats/codec/compression.h"
#include "formats/codec/snappy_pieces.h"
#include "formats/index/index.h"
#include "tests/fuzz/fuzz_util.h"

#ifndef SLUICE_FUZZ_CODEC
#error "define SLUICE_FUZZ_CODEC"
#endif

namespace {

const sluice::Compression& Codec() {
  static const sluice::Compression c = *sluice::ParseCompression(SLUICE_FUZZ_CODEC);
  return c;
}

// The fastest level, for the round trip.
const sluice::Compression& FastCodec() {
  static const sluice::Compression c = [] {
    std::string family = SLUICE_FUZZ_CODEC;
    if (family == "snappy") return *sluice::ParseCompression(family);
    return *sluice::ParseCompression(family + (family == "br" ? ":0" : ":1"));
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  uint64_t max_output = sluice::kMaxShardFileBytes;
  if ((control & 1) == 0) max_output = in.U16();
  std::string_view compressed = in.Rest();

  sluice::Result<std::string> out =
      sluice::Decompress(Codec(), compressed, max_output, "fuzz/shard");
  if (std::string_view(SLUICE_FUZZ_CODEC) == "snappy") {
    static std::string scratch(1 << 20, '\0');
    static sluice::SnappyBody body;
    const uint64_t room = std::min<uint64_t>(max_output, scratch.size());
    if (sluice::SnappyPieces(compressed, scratch.data(), room, &body)) {
      FUZZ_CHECK(out.ok(), "pieces of a block Decompress refuses: %s", out.status().message().c_str());
      std::string joined;
      const auto within = [](std::string_view p, const char* begin, size_t size) {
        return p.data() >= begin && p.data() + p.size() <= begin + size;
      };
      for (std::string_view p : body.pieces) {
        FUZZ_CHECK(within(p, compressed.data(), compressed.size()) ||
                       within(p, scratch.data(), body.scratch_used),
                   "a piece outside the input and the scratch used");
        joined += p;
      }
      FUZZ_CHECK(body.scratch_used <= room, "scratch used past its room");
      FUZZ_CHECK(joined == *out, "pieces differ from Decompress's bytes");
    }
  }
  if (!out.ok()) {
    const sluice::Status& s = out.status();
    FUZZ_CHECK(sluice::IsCorrupt(s) || s.code() == sluice::StatusCode::kIoError,
               "unexpected code: %s", s.message().c_str());
    FUZZ_CHECK(s.message().rfind("fuzz/shard: ", 0) == 0, "unnamed: %s", s.message().c_str());
    return 0;
  }
  FUZZ_CHECK(out->size() <= max_output, "%zu bytes out of at most %llu", out->size(),
             static_cast<unsigned long long>(max_output));
  if (out->size() > (1u << 16)) return 0;  // keep each run fast (bz2 compresses slowly)
  sluice::Result<std::string> packed = sluice::Compress(FastCodec(), *out);
  FUZZ_CHECK(packed.ok(), "%s", packed.status().message().c_str());
  sluice::Result<std::string> back =
      sluice::Decompress(Codec(), *packed, out->size(), "fuzz/roundtrip");
  FUZZ_CHECK(back.ok(), "%s", back.status().message().c_str());
  FUZZ_CHECK(*back == *out, "round trip changed the bytes");
  return 0;
}

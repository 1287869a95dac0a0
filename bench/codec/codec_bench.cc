// Whole-file decompression and hashing throughput on a Mosaic-like shard
// (64 MiB of mixed text and binary). Bytes/s are raw (decompressed) bytes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "formats/codec/compression.h"
#include "formats/codec/hashes.h"

namespace sluice {
namespace {

const std::string& ShardBytes() {
  static const std::string bytes = [] {
    constexpr size_t kSize = size_t{64} << 20;
    static const char* const kWords[] = {"{\"id\": ", "\"name\": \"sample\", ", "\"score\": ",
                                         "0.125, ", "\n"};
    std::string s;
    s.reserve(kSize);
    uint64_t x = 88172645463325252ull;
    while (s.size() < kSize) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      if (x % 4 == 0) {
        for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(x >> (8 * i)));
      } else {
        s += kWords[(x >> 16) % 5];
      }
    }
    s.resize(kSize);
    return s;
  }();
  return bytes;
}

const char* const kCodecs[] = {"zstd", "zstd:19", "br", "br:5", "gz", "bz2", "snappy"};

void BM_Decompress(benchmark::State& state) {
  const Compression c = *ParseCompression(kCodecs[state.range(0)]);
  state.SetLabel(c.name);
  const std::string& raw = ShardBytes();
  // Compress a 4 MiB prefix only: br at 11 and zstd at 19 are slow writers.
  const std::string prefix = raw.substr(0, size_t{4} << 20);
  const std::string packed = *Compress(c, prefix);
  for (auto _ : state) {
    auto out = Decompress(c, packed, prefix.size(), "bench");
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * prefix.size()));
}
BENCHMARK(BM_Decompress)->DenseRange(0, 6)->Unit(benchmark::kMillisecond);

void BM_Compress(benchmark::State& state) {
  const char* const names[] = {"zstd", "snappy", "gz:6"};
  const Compression c = *ParseCompression(names[state.range(0)]);
  state.SetLabel(c.name);
  const std::string prefix = ShardBytes().substr(0, size_t{4} << 20);
  for (auto _ : state) {
    auto out = Compress(c, prefix);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * prefix.size()));
}
BENCHMARK(BM_Compress)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

void BM_Hash(benchmark::State& state) {
  const char* const names[] = {"xxh3_64", "xxh64", "xxh128", "xxh32", "sha1",
                               "sha256", "md5",   "blake2b", "sha3_256"};
  const char* algo = names[state.range(0)];
  state.SetLabel(algo);
  const std::string& raw = ShardBytes();
  for (auto _ : state) {
    auto h = HashHex(algo, raw);
    benchmark::DoNotOptimize(h);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * raw.size()));
}
BENCHMARK(BM_Hash)->DenseRange(0, 8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice

BENCHMARK_MAIN();

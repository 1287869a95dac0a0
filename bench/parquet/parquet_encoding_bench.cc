// Decoding throughput of Parquet's hot encodings, one core, warm caches:
// the RLE/bit-packed hybrid (dictionary indices and levels), PLAIN byte
// arrays (views, no copy), DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and
// BYTE_STREAM_SPLIT. Items are values; bytes are the encoded section's.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/parquet/encoding/byte_stream_split.h"
#include "formats/parquet/encoding/delta_binary_packed.h"
#include "formats/parquet/encoding/delta_length_byte_array.h"
#include "formats/parquet/encoding/plain.h"
#include "formats/parquet/encoding/rle_bit_packed.h"
#include "tests/formats/parquet/encoding/test_encoder.h"

namespace sluice::parquet {
namespace {

constexpr size_t kValues = 1 << 20;

void Count(benchmark::State& state, size_t values, size_t bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * values));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// Dictionary indices of random values in `width` bits: all bit-packed.
void BM_HybridBitPacked(benchmark::State& state) {
  const unsigned width = static_cast<unsigned>(state.range(0));
  std::mt19937_64 rng(1);
  std::vector<uint32_t> values(kValues);
  for (auto& v : values) v = static_cast<uint32_t>(rng() & ((uint64_t{1} << width) - 1));
  const std::string runs = test::EncodeRuns({{true, 0, 0, {values.begin(), values.end()}}}, width);
  std::vector<uint32_t> out(kValues);
  for (auto _ : state) {
    auto d = RleBitPackedDecoder::Create(runs, static_cast<int>(width));
    benchmark::DoNotOptimize(d->Decode(kValues, out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, kValues, runs.size());
}
BENCHMARK(BM_HybridBitPacked)->Arg(1)->Arg(3)->Arg(8)->Arg(12)->Arg(17)->Arg(32);

// Definition levels of a mostly non-null column: long RLE runs of 1 with a
// bit-packed group of nulls now and then, decoded 1,024 at a time.
void BM_HybridLevels(benchmark::State& state) {
  std::mt19937_64 rng(2);
  std::vector<uint32_t> values(kValues, 1);
  for (size_t i = 0; i < kValues; i += 1 + rng() % 200) values[i] = 0;
  const std::string runs = test::EncodeHybrid(values, 1);
  std::vector<uint32_t> out(1024);
  for (auto _ : state) {
    auto d = RleBitPackedDecoder::Create(runs, 1);
    for (size_t i = 0; i < kValues; i += 1024) benchmark::DoNotOptimize(d->Decode(1024, out.data()));
  }
  Count(state, kValues, runs.size());
}
BENCHMARK(BM_HybridLevels);

// PLAIN byte arrays of `range(0)` bytes each, as views.
void BM_PlainByteArrays(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const size_t n = std::min<size_t>(kValues, (size_t{64} << 20) / (size + 4));
  std::vector<std::string> values(n, std::string(size, 'x'));
  const std::string section = test::EncodePlainByteArrays(values);
  std::vector<std::string_view> out(n);
  for (auto _ : state) {
    PlainDecoder d(section);
    benchmark::DoNotOptimize(d.DecodeByteArrays(n, out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, n, section.size());
}
BENCHMARK(BM_PlainByteArrays)->Arg(16)->Arg(1024);

// Row ids (deltas of 1, width 0), token-like ids (random 16 bits) and
// random 64-bit values.
std::vector<int64_t> DeltaValues(int kind) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> v(kValues);
  for (size_t i = 0; i < kValues; ++i) {
    v[i] = kind == 0 ? static_cast<int64_t>(i) : kind == 1 ? static_cast<int64_t>(rng() % 50000)
                                                            : static_cast<int64_t>(rng());
  }
  return v;
}

void BM_DeltaBinaryPackedInt32(benchmark::State& state) {
  const auto v64 = DeltaValues(static_cast<int>(state.range(0)));
  const std::vector<int32_t> values(v64.begin(), v64.end());
  const std::string stream = test::EncodeDeltaInt32(values);
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    auto d = DeltaBinaryPackedDecoder<int32_t>::Create(stream);
    benchmark::DoNotOptimize(d->Decode(kValues, out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, kValues, stream.size());
}
BENCHMARK(BM_DeltaBinaryPackedInt32)->Arg(0)->Arg(1);

void BM_DeltaBinaryPackedInt64(benchmark::State& state) {
  const auto values = DeltaValues(static_cast<int>(state.range(0)));
  const std::string stream = test::EncodeDeltaInt64(values);
  std::vector<int64_t> out(kValues);
  for (auto _ : state) {
    auto d = DeltaBinaryPackedDecoder<int64_t>::Create(stream);
    benchmark::DoNotOptimize(d->Decode(kValues, out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, kValues, stream.size());
}
BENCHMARK(BM_DeltaBinaryPackedInt64)->Arg(0)->Arg(1)->Arg(2);

void BM_DeltaLengthByteArray(benchmark::State& state) {
  std::mt19937_64 rng(4);
  std::vector<std::string> values(kValues / 4);
  for (auto& s : values) s.assign(8 + rng() % 24, 'y');
  const std::string section = test::EncodeDeltaLength(values);
  std::vector<std::string_view> out(values.size());
  for (auto _ : state) {
    auto d = DeltaLengthByteArrayDecoder::Create(section);
    benchmark::DoNotOptimize(d->Decode(values.size(), out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, values.size(), section.size());
}
BENCHMARK(BM_DeltaLengthByteArray);

void BM_ByteStreamSplitFloat(benchmark::State& state) {
  std::string raw(kValues * 4, '\0');
  std::mt19937_64 rng(5);
  for (char& c : raw) c = static_cast<char>(rng());
  const std::string section = test::EncodeByteStreamSplit(raw, 4);
  std::vector<float> out(kValues);
  for (auto _ : state) {
    auto d = ByteStreamSplitDecoder::Create(section, 4);
    benchmark::DoNotOptimize(d->DecodeFloat(kValues, out.data()));
    benchmark::ClobberMemory();
  }
  Count(state, kValues, section.size());
}
BENCHMARK(BM_ByteStreamSplitFloat);

}  // namespace
}  // namespace sluice::parquet

BENCHMARK_MAIN();

// Throughput of the numpy Generator primitives the planner leans on: shuffling
// large id arrays, permutation, and bounded integer draws.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "engine/random/numpy_random.h"

namespace sluice::numpy {
namespace {

void BM_ShuffleInt64(benchmark::State& state) {
  std::vector<int64_t> ids(static_cast<size_t>(state.range(0)));
  std::iota(ids.begin(), ids.end(), 0);
  Generator gen(42);
  for (auto _ : state) {
    gen.Shuffle(ids);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ShuffleInt64)->Arg(1 << 10)->Arg(1 << 20)->Arg(100'000'000)->Unit(benchmark::kMillisecond);

void BM_Permutation(benchmark::State& state) {
  Generator gen(42);
  for (auto _ : state) {
    std::vector<int64_t> p = gen.Permutation(state.range(0));
    benchmark::DoNotOptimize(p.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Permutation)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_Interval(benchmark::State& state) {
  Generator gen(42);
  uint64_t max = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gen.Interval(max));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Interval)->Arg(1000)->Arg(int64_t{1} << 40);

void BM_Bounded(benchmark::State& state) {
  Generator gen(42);
  uint64_t rng = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(gen.Bounded(rng));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Bounded)->Arg(1000)->Arg(int64_t{1} << 40);

void BM_ChoiceTailShuffle(benchmark::State& state) {
  Generator gen(42);
  for (auto _ : state) {
    auto c = gen.Choice(state.range(0), state.range(0) / 10);
    benchmark::DoNotOptimize(c->data());
  }
}
BENCHMARK(BM_ChoiceTailShuffle)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_ChoiceFloyd(benchmark::State& state) {
  Generator gen(42);
  for (auto _ : state) {
    auto c = gen.Choice(state.range(0), state.range(0) / 100);
    benchmark::DoNotOptimize(c->data());
  }
}
BENCHMARK(BM_ChoiceFloyd)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::numpy
BENCHMARK_MAIN();

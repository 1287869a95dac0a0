// numpy 1.24's random Generator, bit-exact for the calls Mosaic's planning
// makes: np.random.default_rng(seed) = Generator(PCG64(SeedSequence(seed))).
// Specification: tests/data/mosaic/README.md section 2.
//
// A generator is a plain value: copyable, not thread-safe (one per thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace sluice::numpy {

// A non-negative seed of any size as 32-bit words, least significant first
// (SeedSequence's entropy). 0 -> {0}; 2^32+5 -> {5, 1}.
std::vector<uint32_t> SeedWords(uint64_t seed);

// SeedSequence(entropy): the 4-word pool and generate_state.
class SeedSequence {
 public:
  explicit SeedSequence(std::span<const uint32_t> entropy_words);
  const uint32_t* pool() const { return pool_; }  // 4 words
  std::vector<uint32_t> GenerateState32(size_t n) const;
  std::vector<uint64_t> GenerateState64(size_t n) const;

 private:
  uint32_t pool_[4];
};

// PCG64 (XSL-RR 128/64) with numpy's buffered 32-bit halves.
class Pcg64 {
 public:
  explicit Pcg64(const SeedSequence& seq);
  uint64_t NextU64();
  uint32_t NextU32();   // buffered: low half first, high half on the next call
  double NextDouble();  // (NextU64() >> 11) * 2^-53
  unsigned __int128 state() const { return state_; }
  unsigned __int128 inc() const { return inc_; }

 private:
  void Step();
  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_u32_ = false;
  uint32_t u32_ = 0;
};

class Generator {
 public:
  explicit Generator(uint64_t seed);  // default_rng(seed)
  explicit Generator(std::span<const uint32_t> seed_words);

  Pcg64& bit_generator() { return pcg_; }

  // Masked rejection in [0, max] (shuffle/permutation). max == 0 draws nothing.
  uint64_t Interval(uint64_t max);
  // Lemire in [0, rng] (integers/choice). rng == 0 draws nothing.
  uint64_t Bounded(uint64_t rng);

  // integers(low, high) and integers(low, high, size); high exclusive.
  // high <= low -> kInvalidArgument ("high <= low"), as numpy's ValueError.
  Result<int64_t> Integers(int64_t low, int64_t high);
  Result<std::vector<int64_t>> Integers(int64_t low, int64_t high, size_t size);

  // shuffle(x) for a list or 1-D ndarray: Fisher-Yates from the end with Interval.
  template <typename T>
  void Shuffle(std::span<T> x) {
    for (size_t i = x.size(); i > 1; --i) {
      size_t j = static_cast<size_t>(Interval(i - 1));
      std::swap(x[i - 1], x[j]);
    }
  }
  template <typename T>
  void Shuffle(std::vector<T>& x) { Shuffle(std::span<T>(x)); }

  std::vector<int64_t> Permutation(int64_t n);  // n >= 0
  // uniform(low, high, size): low + (high - low) * NextDouble(), no FMA.
  std::vector<double> Uniform(double low, double high, size_t size);
  // choice(n, k, replace=False): tail shuffle or Floyd + Lemire shuffle.
  // k > n or negative -> kInvalidArgument.
  Result<std::vector<int64_t>> Choice(int64_t n, int64_t k);
  std::vector<double> Random(size_t size);

 private:
  Pcg64 pcg_;
};

}  // namespace sluice::numpy

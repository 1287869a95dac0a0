// Behaviour of the numpy Generator port that rng.json does not pin down on its
// own: the README's worked examples, the 32-bit buffer, draws that must not
// happen, and the errors numpy raises.
#include "engine/random/numpy_random.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::numpy {
namespace {

// Generators compare equal when their whole stream state is equal.
void ExpectSameStream(Generator& a, Generator& b) {
  EXPECT_TRUE(a.bit_generator().state() == b.bit_generator().state());
  EXPECT_EQ(a.bit_generator().has_buffered_u32(), b.bit_generator().has_buffered_u32());
  EXPECT_EQ(a.bit_generator().NextU32(), b.bit_generator().NextU32());
}

TEST(NumpyRandom, SeedWords) {
  EXPECT_EQ(SeedWords(0), (std::vector<uint32_t>{0}));
  EXPECT_EQ(SeedWords(9176), (std::vector<uint32_t>{9176}));
  EXPECT_EQ(SeedWords((uint64_t{1} << 32) + 5), (std::vector<uint32_t>{5, 1}));
  EXPECT_EQ(SeedWords(~uint64_t{0}), (std::vector<uint32_t>{0xFFFFFFFFu, 0xFFFFFFFFu}));
}

TEST(NumpyRandom, ReadmeExamples) {
  Generator a(0);
  auto ints = a.Integers(0, 10, 3);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(*ints, (std::vector<int64_t>{8, 6, 5}));

  Generator b(0);
  std::vector<int64_t> x{0, 1, 2, 3, 4};
  b.Shuffle(x);
  EXPECT_EQ(x, (std::vector<int64_t>{2, 4, 3, 0, 1}));

  Generator c(0);
  EXPECT_EQ(c.Permutation(5), (std::vector<int64_t>{2, 4, 3, 0, 1}));
}

TEST(NumpyRandom, ShuffleWorksOnAnyElementType) {
  Generator a(0);
  std::vector<int> small{0, 1, 2, 3, 4};
  a.Shuffle(small);
  EXPECT_EQ(small, (std::vector<int>{2, 4, 3, 0, 1}));
}

// The plain Fisher-Yates of the spec, as the reference for Shuffle's
// prefetching path on large arrays.
template <typename T>
void ReferenceShuffle(Generator& gen, std::vector<T>& x) {
  for (size_t i = x.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(gen.Interval(i - 1));
    std::swap(x[i - 1], x[j]);
  }
}

TEST(NumpyRandom, LargeShuffleMatchesPlainFisherYates) {
  // 2^18 int64 = 2 MiB: above the prefetch threshold. Odd seeds and sizes
  // leave different 32-bit buffer states behind.
  for (size_t n : {size_t{1} << 18, (size_t{1} << 18) + 3}) {
    std::vector<int64_t> a(n);
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<int64_t>(i);
    std::vector<int64_t> b = a;
    Generator ga(5);
    Generator gb(5);
    ga.Shuffle(a);
    ReferenceShuffle(gb, b);
    EXPECT_EQ(a, b);
    ExpectSameStream(ga, gb);
  }
}

TEST(NumpyRandom, ShuffleOfFewHugeElementsDrawsOnlyWhatItNeeds) {
  // 3 elements of 400 kB: above the prefetch threshold in bytes, yet only 2
  // draws may happen.
  using Big = std::array<uint8_t, 400000>;
  std::vector<Big> a(3);
  for (size_t i = 0; i < a.size(); ++i) a[i].fill(static_cast<uint8_t>(i));
  std::vector<uint8_t> b{0, 1, 2};
  Generator ga(11);
  Generator gb(11);
  ga.Shuffle(a);
  ReferenceShuffle(gb, b);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i][0], b[i]);
  ExpectSameStream(ga, gb);
}

TEST(NumpyRandom, U32BufferLowHalfThenHighHalf) {
  Generator a(42);
  Generator b(42);
  uint64_t whole = b.bit_generator().NextU64();
  EXPECT_FALSE(a.bit_generator().has_buffered_u32());
  EXPECT_EQ(a.bit_generator().NextU32(), static_cast<uint32_t>(whole));
  EXPECT_TRUE(a.bit_generator().has_buffered_u32());
  // NextU64 and NextDouble neither use nor clear the saved half.
  EXPECT_EQ(a.bit_generator().NextU64(), b.bit_generator().NextU64());
  EXPECT_TRUE(a.bit_generator().has_buffered_u32());
  EXPECT_EQ(a.bit_generator().NextU32(), static_cast<uint32_t>(whole >> 32));
  EXPECT_FALSE(a.bit_generator().has_buffered_u32());
}

TEST(NumpyRandom, DegenerateRangesDrawNothing) {
  Generator a(1);
  Generator untouched(1);
  EXPECT_EQ(a.Interval(0), 0u);
  EXPECT_EQ(a.Bounded(0), 0u);
  auto one = a.Integers(7, 8);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, 7);
  auto ones = a.Integers(-3, -2, 4);
  ASSERT_TRUE(ones.ok());
  EXPECT_EQ(*ones, (std::vector<int64_t>{-3, -3, -3, -3}));
  EXPECT_EQ(a.Permutation(1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(a.Permutation(0).empty());
  auto none = a.Choice(5, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  ExpectSameStream(a, untouched);
}

TEST(NumpyRandom, UniformWithEmptyRangeStillDraws) {
  Generator a(9176);
  Generator b(9176);
  EXPECT_EQ(a.Uniform(2.5, 2.5, 3), (std::vector<double>{2.5, 2.5, 2.5}));
  b.Random(3);
  ExpectSameStream(a, b);
}

TEST(NumpyRandom, FullWidthRanges) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // rng = 2^64 - 2: the 128-bit Lemire path; one u64 per value at most
  // (rejection has probability 2^-63 here).
  Generator a(3);
  Generator b(3);
  auto wide = a.Integers(kMin, kMax);
  ASSERT_TRUE(wide.ok());
  uint64_t raw = b.bit_generator().NextU64();
  uint64_t scaled = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(raw) * (~uint64_t{0})) >> 64);
  EXPECT_EQ(*wide, static_cast<int64_t>(static_cast<uint64_t>(kMin) + scaled));
  // rng == 0xFFFFFFFF takes one buffered u32 as is.
  Generator c(3);
  Generator d(3);
  EXPECT_EQ(c.Bounded(0xFFFFFFFFu), d.bit_generator().NextU32());
  // rng == 2^64 - 1 takes one u64 as is.
  EXPECT_EQ(c.Bounded(~uint64_t{0}), d.bit_generator().NextU64());
}

TEST(NumpyRandom, IntegersRejectsEmptyRange) {
  Generator a(0);
  Generator untouched(0);
  auto scalar = a.Integers(0, 0);
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(scalar.status().message(), "integers(low=0, high=0): high <= low");
  auto vec = a.Integers(5, 4, 3);
  ASSERT_FALSE(vec.ok());
  EXPECT_EQ(vec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(vec.status().message(), "integers(low=5, high=4, size=3): high <= low");
  ExpectSameStream(a, untouched);
}

TEST(NumpyRandom, ChoiceRejectsTooLargeOrNegative) {
  Generator a(0);
  Generator untouched(0);
  auto big = a.Choice(3, 4);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(),
            "choice(a=3, size=4, replace=False): cannot take a larger sample than population");
  auto neg = a.Choice(3, -1);
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(neg.status().message(), "choice(a=3, size=-1, replace=False): negative population or size");
  auto neg_pop = a.Choice(-2, 0);
  ASSERT_FALSE(neg_pop.ok());
  EXPECT_EQ(neg_pop.status().code(), StatusCode::kInvalidArgument);
  ExpectSameStream(a, untouched);
}

TEST(NumpyRandom, ChoiceReturnsDistinctValuesInRange) {
  // Both paths: Floyd (k <= n/50) and the tail shuffle (k > n/50, n > 10000).
  for (auto [n, k] : {std::pair<int64_t, int64_t>{100000, 2000}, {100000, 2001}, {20000, 20000}}) {
    Generator g(7);
    auto got = g.Choice(n, k);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), static_cast<size_t>(k));
    std::vector<bool> seen(static_cast<size_t>(n));
    for (int64_t v : *got) {
      ASSERT_GE(v, 0);
      ASSERT_LT(v, n);
      EXPECT_FALSE(seen[static_cast<size_t>(v)]) << "repeated " << v;
      seen[static_cast<size_t>(v)] = true;
    }
  }
}

}  // namespace
}  // namespace sluice::numpy

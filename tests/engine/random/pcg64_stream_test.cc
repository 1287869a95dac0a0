// Pcg64's jump-ahead (Advance) and lane-parallel Fill, and Pcg64Stream: all
// must yield exactly the words (and 32-bit halves) of plain NextU64/NextU32
// calls, and leave the generator in the same state.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/random/numpy_random.h"
#include "engine/random/pcg64_ahead.h"

namespace sluice::numpy {
namespace {

void ExpectSameState(Pcg64& a, Pcg64& b) {
  EXPECT_TRUE(a.state() == b.state());
  EXPECT_EQ(a.has_buffered_u32(), b.has_buffered_u32());
  EXPECT_EQ(a.NextU32(), b.NextU32());
  EXPECT_EQ(a.NextU32(), b.NextU32());
}

TEST(Pcg64Stream, AdvanceEqualsSteps) {
  for (uint64_t delta : {0ULL, 1ULL, 2ULL, 3ULL, 7ULL, 64ULL, 1000ULL, 12345ULL}) {
    Generator a(9176), b(9176);
    a.bit_generator().NextU32();  // a pending half must survive the jump
    b.bit_generator().NextU32();
    for (uint64_t i = 0; i < delta; ++i) a.bit_generator().NextU64();
    b.bit_generator().Advance(delta);
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
}

TEST(Pcg64Stream, AdvanceFarMatchesComposedJumps) {
  // 2^40 + 5 steps as one jump, and as 2^40 then 5 single steps.
  Generator a(1), b(1);
  a.bit_generator().Advance((static_cast<unsigned __int128>(1) << 40) + 5);
  b.bit_generator().Advance(static_cast<unsigned __int128>(1) << 40);
  for (int i = 0; i < 5; ++i) b.bit_generator().NextU64();
  ExpectSameState(a.bit_generator(), b.bit_generator());
}

TEST(Pcg64Stream, FillEqualsNextU64) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{12}, size_t{13}, size_t{1001}}) {
    Generator a(42), b(42);
    std::vector<uint64_t> want(n), got(n);
    for (auto& v : want) v = a.bit_generator().NextU64();
    b.bit_generator().Fill(got.data(), n);
    EXPECT_EQ(got, want) << n;
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
}

// A random mix of every stream operation against the plain generator,
// with words made ahead on a second thread (pcg64_ahead.h) attached at
// random points (a pending half included) and detached by skips, fills,
// commits and the trial's end; shuffles long enough to read several of its
// blocks.
TEST(Pcg64Stream, MixedDrawsMatchTheGenerator) {
  std::mt19937_64 pick(3);
  Pcg64Ahead ahead;
  for (int trial = 0; trial < 50; ++trial) {
    Generator a{uint64_t(trial)}, b{uint64_t(trial)};
    {
      Pcg64Stream st(b.bit_generator());
      for (int op = 0; op < 400; ++op) {
        switch (pick() % 11) {
          case 0: ASSERT_EQ(st.NextU64(), a.bit_generator().NextU64()); break;
          case 1: ASSERT_EQ(st.NextU32(), a.bit_generator().NextU32()); break;
          case 2: ASSERT_EQ(st.NextDouble(), a.bit_generator().NextDouble()); break;
          case 3: {
            const size_t n = size_t(pick() % (op % 7 == 0 ? 9000 : 700));
            std::vector<uint64_t> got(n);
            st.Fill64(got.data(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], a.bit_generator().NextU64());
            break;
          }
          case 4: {
            const uint64_t n = pick() % (op % 7 == 0 ? 9000 : 700);
            st.Skip64(n);
            for (uint64_t i = 0; i < n; ++i) a.bit_generator().NextU64();
            break;
          }
          case 5: {
            const uint64_t max = pick() % 5 == 0 ? (uint64_t{1} << 40) + pick() % 1000 : pick() % 100000;
            ASSERT_EQ(IntervalFrom(st, max), a.Interval(max));
            ASSERT_EQ(BoundedFrom(st, max), a.Bounded(max));
            break;
          }
          case 6: {
            std::vector<int64_t> x(size_t(pick() % (op % 5 == 0 ? 30000 : 600))), y;
            for (size_t i = 0; i < x.size(); ++i) x[i] = int64_t(i);
            y = x;
            st.ShuffleU32(std::span<int64_t>(x));
            a.Shuffle(y);
            ASSERT_EQ(x, y);
            break;
          }
          case 7: {
            std::vector<int64_t> y(size_t(pick() % (op % 5 == 0 ? 30000 : 600)));
            st.SkipShuffleU32(y.size());
            a.Shuffle(y);
            break;
          }
          case 8: {
            // One draw between equal skips, as py1e's skipped spans: the
            // second skip reuses the first one's jump.
            const uint64_t n = 300 + pick() % 3;
            for (int k = 0; k < 3; ++k) {
              ASSERT_EQ(st.NextU32(), a.bit_generator().NextU32());
              st.Skip64(n);
              for (uint64_t i = 0; i < n; ++i) a.bit_generator().NextU64();
            }
            break;
          }
          case 9: {
            // A snapshot stands where the stream stands, pending half included.
            Pcg64 snap = st.Snapshot();
            Pcg64 ref = a.bit_generator();  // ExpectSameState draws from both
            ExpectSameState(snap, ref);
            break;
          }
          case 10: st.Attach(&ahead); break;
        }
        if (op % 97 == 0) st.Commit();  // committing mid-way keeps the stream going
      }
    }
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
}

TEST(Pcg64Stream, ShuffleFromEqualsShuffle) {
  Generator a(5), b(5);
  std::vector<int64_t> x(5000), y(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = y[i] = int64_t(i);
  a.Shuffle(x);
  {
    Pcg64Stream st(b.bit_generator());
    ShuffleFrom(st, std::span<int64_t>(y));
  }
  EXPECT_EQ(x, y);
  ExpectSameState(a.bit_generator(), b.bit_generator());
}

// SkipShuffleU32 (the replay PlanCheckpoints spends half its time in): for
// every size up to past two powers of two, from each parity of the pending
// half, across block ends and at shard and larger sizes, it leaves the
// generator where Shuffle does.
TEST(Pcg64Stream, SkipShuffleU32LeavesTheGeneratorWhereShuffleDoes) {
  Generator a(11), b(11);
  for (size_t n = 0; n < 1100; ++n) {
    SCOPED_TRACE(n);
    if (n % 3 == 0) {
      ASSERT_EQ(a.bit_generator().NextU32(), b.bit_generator().NextU32());
    }
    std::vector<int64_t> y(n);
    a.Shuffle(y);
    {
      Pcg64Stream st(b.bit_generator());
      st.SkipShuffleU32(n);
    }
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
  for (size_t n : {size_t{4000}, size_t{65537}, size_t{1} << 20}) {
    std::vector<int64_t> y(n);
    a.Shuffle(y);
    {
      Pcg64Stream st(b.bit_generator());
      st.SkipShuffleU32(n);
    }
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
}

// PlanCheckpoints' use: one stream replays a part's spans back to back, so
// the counted runs of SkipShuffleU32 and ShuffleU32 (as many draws as i may
// fall before its mask changes, cut at the block's end) start and end at
// every place in a block, with the words made here or ahead on a thread.
TEST(Pcg64Stream, SpansBackToBackInOneStreamDrawAsShuffle) {
  std::mt19937_64 pick(17);
  Pcg64Ahead ahead;
  for (int trial = 0; trial < 4; ++trial) {
    SCOPED_TRACE(trial);
    Generator a(uint64_t(100 + trial)), b(uint64_t(100 + trial));
    {
      Pcg64Stream st(b.bit_generator());
      if (trial % 2 == 1) st.Attach(&ahead);
      for (int span = 0; span < 400; ++span) {
        const size_t n = span % 50 == 0 ? size_t{1} << 17 : size_t(1 + pick() % 5000);
        std::vector<int64_t> y(n);
        for (size_t i = 0; i < n; ++i) y[i] = int64_t(i);
        if (span % 3 == 0) {
          std::vector<int64_t> x = y;
          st.ShuffleU32(std::span<int64_t>(x));
          a.Shuffle(y);
          ASSERT_EQ(x, y) << "span " << span;
        } else {
          st.SkipShuffleU32(n);
          a.Shuffle(y);
        }
      }
    }
    ExpectSameState(a.bit_generator(), b.bit_generator());
  }
}

}  // namespace
}  // namespace sluice::numpy

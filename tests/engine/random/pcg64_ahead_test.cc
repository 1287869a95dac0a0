// Pcg64Ahead (engine/random/pcg64_ahead.h): a Pcg64Stream reading words made
// on the second thread yields exactly the words, 32-bit halves and final
// state of the plain generator, across restarts, detaches and a maker that
// throws (whose error is kept for the caller).
#include "engine/random/pcg64_ahead.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/random/numpy_random.h"

namespace sluice::numpy {
namespace {

void ExpectAheadSameState(Pcg64& a, Pcg64& b) {
  EXPECT_TRUE(a.state() == b.state());
  EXPECT_EQ(a.has_buffered_u32(), b.has_buffered_u32());
  EXPECT_EQ(a.NextU32(), b.NextU32());
  EXPECT_EQ(a.NextU32(), b.NextU32());
}

TEST(Pcg64Ahead, BlocksAreTheWordsThatFollowTheStart) {
  Generator g(77);
  Pcg64 ref = g.bit_generator();
  Pcg64Ahead ahead;
  for (int run = 0; run < 3; ++run) {
    ahead.Start(ref);
    // Read past the ring's length: the maker waits for the reader and resumes.
    for (size_t b = 0; b < 2 * Pcg64Ahead::kSlots + 3; ++b) {
      const Pcg64Ahead::Block* block = ahead.Next();
      ASSERT_NE(block, nullptr);
      ASSERT_TRUE(block->before == ref.state()) << "run " << run << " block " << b;
      for (size_t w = 0; w < Pcg64Ahead::kWords; ++w) ASSERT_EQ(block->words[w], ref.NextU64());
      ASSERT_TRUE(block->after == ref.state());
    }
    ahead.Stop();
    EXPECT_EQ(ahead.Next(), nullptr);  // parked
    ref.Advance(12345 + run);          // the next run starts elsewhere
  }
  EXPECT_TRUE(ahead.status().ok());
}

// Every stream operation, with words made ahead attached at random points
// (a pending half included) and detached by skips, fills and commits.
TEST(Pcg64Ahead, AttachedStreamMatchesTheGenerator) {
  std::mt19937_64 pick(5);
  Pcg64Ahead ahead;
  for (int trial = 0; trial < 20; ++trial) {
    Generator a{uint64_t(trial)}, b{uint64_t(trial)};
    {
      Pcg64Stream st(b.bit_generator());
      for (int op = 0; op < 300; ++op) {
        switch (pick() % 8) {
          case 0: st.Attach(&ahead); break;
          case 1: ASSERT_EQ(st.NextU32(), a.bit_generator().NextU32()); break;
          case 2: ASSERT_EQ(st.NextU64(), a.bit_generator().NextU64()); break;
          case 3: {
            std::vector<int64_t> x(size_t(pick() % 20000)), y;
            for (size_t i = 0; i < x.size(); ++i) x[i] = int64_t(i);
            y = x;
            st.ShuffleU32(std::span<int64_t>(x));
            a.Shuffle(y);
            ASSERT_EQ(x, y);
            break;
          }
          case 4: {
            std::vector<int64_t> y(size_t(pick() % 30000));
            st.SkipShuffleU32(y.size());
            a.Shuffle(y);
            break;
          }
          case 5: {
            const size_t n = size_t(pick() % 9000);
            std::vector<uint64_t> got(n);
            st.Fill64(got.data(), n);
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], a.bit_generator().NextU64());
            break;
          }
          case 6: {
            const uint64_t n = pick() % 9000;
            st.Skip64(n);
            for (uint64_t i = 0; i < n; ++i) a.bit_generator().NextU64();
            break;
          }
          case 7: {
            Pcg64 snap = st.Snapshot();
            Pcg64 ref = a.bit_generator();
            ExpectAheadSameState(snap, ref);
            break;
          }
        }
        if (op % 37 == 0) st.Commit();
      }
    }
    ExpectAheadSameState(a.bit_generator(), b.bit_generator());
  }
  EXPECT_TRUE(ahead.status().ok());
}

void ThrowingMaker(Pcg64&, uint64_t*) { throw std::runtime_error("test maker failed"); }

TEST(Pcg64Ahead, AMakerThatThrowsIsReportedAndTheWordsStayRight) {
  Generator a(9), b(9);
  Pcg64Ahead ahead(&ThrowingMaker);
  {
    Pcg64Stream st(b.bit_generator());
    st.Attach(&ahead);
    std::vector<int64_t> y(50000);
    st.SkipShuffleU32(y.size());  // made on this thread once the maker failed
    a.Shuffle(y);
    ASSERT_EQ(st.NextU32(), a.bit_generator().NextU32());
  }
  ExpectAheadSameState(a.bit_generator(), b.bit_generator());
  EXPECT_EQ(ahead.status().code(), StatusCode::kInternal);
  EXPECT_EQ(ahead.status().message(), "making PCG64 words ahead: unexpected exception: test maker failed");
  // Later runs are refused at once and read nothing.
  ahead.Start(a.bit_generator());
  EXPECT_EQ(ahead.Next(), nullptr);
}

}  // namespace
}  // namespace sluice::numpy

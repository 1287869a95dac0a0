// Pcg64Ahead (engine/random/pcg64_ahead.h): its blocks are the words that
// follow each start, across restarts and a full ring; a maker that throws
// leaves a stream's words right and its error kept for the caller. (A
// stream reading it among every other operation: pcg64_stream_test.cc.)
#include "engine/random/pcg64_ahead.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine/random/numpy_random.h"

namespace sluice::numpy {
namespace {

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
  EXPECT_TRUE(a.bit_generator().state() == b.bit_generator().state());
  EXPECT_EQ(a.bit_generator().has_buffered_u32(), b.bit_generator().has_buffered_u32());
  EXPECT_EQ(a.bit_generator().NextU32(), b.bit_generator().NextU32());
  EXPECT_EQ(ahead.status().code(), StatusCode::kInternal);
  EXPECT_EQ(ahead.status().message(), "making PCG64 words ahead: unexpected exception: test maker failed");
  // Later runs are refused at once and read nothing.
  ahead.Start(a.bit_generator());
  EXPECT_EQ(ahead.Next(), nullptr);
}

}  // namespace
}  // namespace sluice::numpy

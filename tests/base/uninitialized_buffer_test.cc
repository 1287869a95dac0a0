// UninitializedBuffer: the size asked for, writable, large buffers aligned
// for huge pages and advised the page size asked for, bytes that stay put
// across moves, and a refused allocation as kIoError rather than an abort.
#include "base/uninitialized_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/base/address_limit.h"
#include "tests/base/page_advice.h"

namespace sluice {
namespace {

TEST(UninitializedBuffer, EmptyHoldsNothing) {
  Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(0, "pages");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 0u);
  EXPECT_EQ(b->data(), nullptr);
}

TEST(UninitializedBuffer, SmallBufferIsWritableAndMovesWithoutMovingItsBytes) {
  Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(100, "pages");
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 100u);
  std::memset(b->data(), 'x', 100);
  const char* at = b->data();
  UninitializedBuffer moved = std::move(*b);
  EXPECT_EQ(moved.data(), at);
  EXPECT_EQ(std::string(moved.data(), 100), std::string(100, 'x'));
}

TEST(UninitializedBuffer, LargeBufferStartsOnAHugePage) {
  const size_t size = (size_t{5} << 20) + 3;
  Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(size, "pages");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), size);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % (uintptr_t{2} << 20), 0u);
  b->data()[size - 1] = 'z';  // the last byte is ours
  EXPECT_EQ(b->data()[size - 1], 'z');
}

TEST(UninitializedBuffer, FreedLargeBufferIsReusedForAboutItsSize) {
  // Sizes no other test uses, so the pool holds only this test's buffers.
  const size_t size = (size_t{37} << 20) + 5;
  char* first = nullptr;
  {
    Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(size, "pages");
    ASSERT_TRUE(b.ok());
    first = b->data();
    first[size - 1] = 'q';
  }
  Result<UninitializedBuffer> again = UninitializedBuffer::Allocate(size - 1000, "pages");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(again->size(), size - 1000);
  // Not for a request of less than half its size, nor while in use.
  Result<UninitializedBuffer> small = UninitializedBuffer::Allocate(size_t{17} << 20, "pages");
  ASSERT_TRUE(small.ok());
  EXPECT_NE(small->data(), first);
  Result<UninitializedBuffer> other = UninitializedBuffer::Allocate(size, "pages");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->data(), first);
  UninitializedBuffer moved;
  moved = std::move(*again);  // moves keep the allocation
  EXPECT_EQ(moved.data(), first);
  EXPECT_EQ(again->data(), nullptr);
}

TEST(UninitializedBuffer, LargeBufferIsAdvisedThePagesAskedFor) {
  if (!testing::KernelTakesHugePageAdvice()) GTEST_SKIP() << "no transparent huge pages";
  // Sizes no other test uses, so neither comes from the recycled ones.
  Result<UninitializedBuffer> huge = UninitializedBuffer::Allocate(size_t{9} << 20, "pages");
  Result<UninitializedBuffer> small = UninitializedBuffer::Allocate(
      size_t{13} << 20, "pages", UninitializedBuffer::Pages::kSmall);
  ASSERT_TRUE(huge.ok() && small.ok());
  EXPECT_TRUE(testing::HasVmFlag(huge->data(), "hg"));
  EXPECT_FALSE(testing::HasVmFlag(huge->data(), "nh"));
  EXPECT_TRUE(testing::HasVmFlag(small->data(), "nh"));
  EXPECT_FALSE(testing::HasVmFlag(small->data(), "hg"));
  // The last page too: the advice covers the whole buffer.
  EXPECT_TRUE(testing::HasVmFlag(small->data() + small->size() - 1, "nh"));
}

TEST(UninitializedBuffer, RecycledBufferIsAdvisedAgainForTheOtherPages) {
  if (!testing::KernelTakesHugePageAdvice()) GTEST_SKIP() << "no transparent huge pages";
  // Larger than twice any other test's buffer, so no buffer they left is
  // taken for it; never written, so it costs address space only.
  const size_t size = (size_t{101} << 20) + 7;
  char* first = nullptr;
  {
    Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(size, "pages");
    ASSERT_TRUE(b.ok());
    first = b->data();
    ASSERT_TRUE(testing::HasVmFlag(first, "hg"));
  }
  {
    Result<UninitializedBuffer> small =
        UninitializedBuffer::Allocate(size, "pages", UninitializedBuffer::Pages::kSmall);
    ASSERT_TRUE(small.ok());
    ASSERT_EQ(small->data(), first) << "not the recycled buffer";
    EXPECT_TRUE(testing::HasVmFlag(first, "nh"));
    EXPECT_FALSE(testing::HasVmFlag(first, "hg"));
  }
  // Recycled as small, it is advised huge again for a default request.
  Result<UninitializedBuffer> huge = UninitializedBuffer::Allocate(size, "pages");
  ASSERT_TRUE(huge.ok());
  ASSERT_EQ(huge->data(), first) << "not the recycled buffer";
  EXPECT_TRUE(testing::HasVmFlag(first, "hg"));
  EXPECT_FALSE(testing::HasVmFlag(first, "nh"));
}

TEST(RecyclingAllocator, LargeArraysComeBackForTheNextOfTheirSize) {
  // A size no other test uses (the pool is the process's).
  const size_t n = ((size_t{11} << 20) + 24) / 8;
  const uint64_t* first = nullptr;
  {
    std::vector<uint64_t, RecyclingAllocator<uint64_t>> a(n, 7);
    first = a.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (uintptr_t{2} << 20), 0u);
    EXPECT_EQ(a[n - 1], 7u);
  }
  std::vector<uint64_t, RecyclingAllocator<uint64_t>> again(n);  // value-initialized all the same
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again[0], 0u);
  EXPECT_EQ(again[n - 1], 0u);
  // Below kRecycledFrom: malloc's, not the pool's.
  std::vector<uint8_t, RecyclingAllocator<uint8_t>> small(kRecycledFrom - 1, 1);
  EXPECT_EQ(small.back(), 1u);
}

TEST(UninitializedBuffer, RefusedAllocationIsAnError) {
  if (!testing::kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS under a sanitizer";
  const std::string got = testing::RunWithAddressLimit(64 << 20, [] {
    Result<UninitializedBuffer> b = UninitializedBuffer::Allocate(size_t{1} << 33, "f: pages");
    return b.ok() ? std::string("allocated") : b.status().ToString();
  });
  EXPECT_EQ(got, "i/o error: f: pages: out of memory (8589934592 bytes)");
}

}  // namespace
}  // namespace sluice

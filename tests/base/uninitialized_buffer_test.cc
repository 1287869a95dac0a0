// UninitializedBuffer: the size asked for, writable, large buffers aligned
// for huge pages, bytes that stay put across moves, and a refused
// allocation as kIoError rather than an abort.
#include "base/uninitialized_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/base/address_limit.h"

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

// UninitializedBuffer: the size asked for, writable, large buffers aligned
// for huge pages, bytes that stay put across moves, and a refused
// allocation as kIoError rather than an abort.
#include "base/uninitialized_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

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

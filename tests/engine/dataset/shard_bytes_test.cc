// ShardBytes: received room shows only the bytes said to have come, and is
// mapped in small pages, from a pool or not; a string already whole shows
// all of it.
#include "engine/dataset/shard_bytes.h"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "engine/dataset/shard_buffer_pool.h"
#include "tests/base/page_advice.h"

namespace sluice {
namespace {

TEST(ShardBytesTest, RoomShowsOnlyTheBytesReceived) {
  auto bytes = ShardBytes::Allocate(10, "a shard");
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->room(), 10u);
  ASSERT_NE(bytes->Room(), nullptr);
  EXPECT_TRUE(bytes->view().empty());
  std::memcpy(bytes->Room(), "shard", 5);
  bytes->Received(5);
  EXPECT_EQ(bytes->view(), "shard");
  // Moved, the bytes stay where they are.
  const char* at = bytes->view().data();
  ShardBytes moved = std::move(*bytes);
  EXPECT_EQ(moved.view().data(), at);
  EXPECT_EQ(moved.view(), "shard");
  // Never more than the room.
  std::memcpy(moved.Room() + 5, "bytes", 5);
  moved.Received(99);
  EXPECT_EQ(moved.view(), "shardbytes");
  EXPECT_EQ(moved.size(), 10u);
}

TEST(ShardBytesTest, LargeRoomIsInSmallPagesFromAPoolOrNot) {
  if (!testing::KernelTakesHugePageAdvice()) GTEST_SKIP() << "no transparent huge pages";
  // Shard-sized: past the size from which buffers are advised at all.
  // Sizes no other test of this executable uses (the recycled buffers are
  // the process's).
  auto alone = ShardBytes::Allocate((size_t{19} << 20) + 1, "a shard");
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_TRUE(testing::HasVmFlag(alone->Room(), "nh"));
  EXPECT_FALSE(testing::HasVmFlag(alone->Room(), "hg"));
  ShardBufferPool pool(1);
  auto pooled = ShardBytes::Allocate((size_t{21} << 20) + 1, "a shard", &pool);
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  EXPECT_EQ(pool.counters().allocated, 1u);
  EXPECT_TRUE(testing::HasVmFlag(pooled->Room(), "nh"));
  EXPECT_FALSE(testing::HasVmFlag(pooled->Room(), "hg"));
}

TEST(ShardBytesTest, AWholeStringIsAllReadableAndHasNoRoom) {
  ShardBytes bytes = ShardBytes::Of("whole");
  EXPECT_EQ(bytes.view(), "whole");
  EXPECT_EQ(bytes.Room(), nullptr);
  EXPECT_EQ(bytes.room(), 0u);
  EXPECT_TRUE(ShardBytes().view().empty());
}

}  // namespace
}  // namespace sluice

// ShardBytes: received room shows only the bytes said to have come; a
// string already whole shows all of it.
#include "engine/dataset/shard_bytes.h"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

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

TEST(ShardBytesTest, AWholeStringIsAllReadableAndHasNoRoom) {
  ShardBytes bytes = ShardBytes::Of("whole");
  EXPECT_EQ(bytes.view(), "whole");
  EXPECT_EQ(bytes.Room(), nullptr);
  EXPECT_EQ(bytes.room(), 0u);
  EXPECT_TRUE(ShardBytes().view().empty());
}

}  // namespace
}  // namespace sluice

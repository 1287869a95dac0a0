#include <string>

#include <gtest/gtest.h>

#include "formats/index/index.h"

namespace sluice {
namespace {

using namespace std::string_literals;

TEST(IsSafeBasename, AcceptsRelativePaths) {
  EXPECT_TRUE(IsSafeBasename("shard.00000.mds"));
  EXPECT_TRUE(IsSafeBasename("part0/shard.00000.mds.zstd"));
  EXPECT_TRUE(IsSafeBasename("a..b/..c/d.."));  // ".." only as a whole component
  EXPECT_TRUE(IsSafeBasename("./x"));
}

TEST(IsSafeBasename, RejectsEscapes) {
  EXPECT_FALSE(IsSafeBasename(""));
  EXPECT_FALSE(IsSafeBasename("/etc/passwd"));
  EXPECT_FALSE(IsSafeBasename(".."));
  EXPECT_FALSE(IsSafeBasename("../x"));
  EXPECT_FALSE(IsSafeBasename("a/../../x"));
  EXPECT_FALSE(IsSafeBasename("a/.."));
  EXPECT_FALSE(IsSafeBasename("a\\b"));
  EXPECT_FALSE(IsSafeBasename("..\\x"));
  EXPECT_FALSE(IsSafeBasename("a\0b"s));
}

}  // namespace
}  // namespace sluice

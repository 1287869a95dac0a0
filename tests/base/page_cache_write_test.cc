// WriteInPageCacheBlocks (base/page_cache_write.h): the bytes as given, in
// writes that never cross a kPageCacheWriteBlock boundary of the file.
#include "base/page_cache_write.h"

#include <gtest/gtest.h>

#include <string>

#include "base/file.h"
#include "tests/base/fault_env.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

std::string Pattern(size_t n, char first) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(first + i % 23);
  return s;
}

TEST(PageCacheWrite, PiecesLandWholeAndInOrder) {
  testing::TempDir dir("sluice_page_cache_write");
  const std::string path = JoinPath(dir.path(), "f.bin");
  auto tmp = TempFile::Create(path);
  ASSERT_TRUE(tmp.ok());
  const std::string a = Pattern(80, 'a'), b = Pattern(3 * kPageCacheWriteBlock + 5, 'b'), c = "";
  uint64_t offset = 0;
  for (const std::string* piece : {&a, &b, &c}) {
    ASSERT_TRUE(WriteInPageCacheBlocks(*tmp, *piece, &offset).ok());
  }
  EXPECT_EQ(offset, a.size() + b.size());
  ASSERT_TRUE(tmp->Commit().ok());
  EXPECT_EQ(*ReadFile(path), a + b);
}

// The writes end at block boundaries: the 3rd write (80 bytes, then the
// rest of the first block, then the second block) fails, and the file
// holds exactly one block.
TEST(PageCacheWrite, WritesStopAtBlockBoundaries) {
  testing::TempDir dir("sluice_page_cache_write");
  testing::FaultEnv env;
  auto tmp = TempFile::Create(JoinPath(dir.path(), "f.bin"), &env);
  ASSERT_TRUE(tmp.ok());
  uint64_t offset = 0;
  ASSERT_TRUE(WriteInPageCacheBlocks(*tmp, Pattern(80, 'a'), &offset).ok());
  env.Add(testing::FsFault{.op = testing::FsOp::kWrite, .nth = 2, .err = ENOSPC});
  const Status s = WriteInPageCacheBlocks(*tmp, Pattern(2 * kPageCacheWriteBlock, 'b'), &offset);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(env.fired(), 1);
  EXPECT_EQ(offset, kPageCacheWriteBlock);
  EXPECT_EQ(*FileSize(tmp->path()), kPageCacheWriteBlock);
}

}  // namespace
}  // namespace sluice

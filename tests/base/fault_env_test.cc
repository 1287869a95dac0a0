// FaultEnv itself, and what base/file.h's helpers leave behind when a
// write, a rename or a read fails under them.
#include "tests/base/fault_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "base/file.h"
#include "tests/common/temp_dir.h"

namespace sluice::testing {
namespace {

class FaultEnvTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return JoinPath(dir_.path(), name); }
  // The folder's names, sorted: what a failed write left behind.
  std::vector<std::string> Names() const {
    auto names = Env::Default()->ListFolder(dir_.path());
    EXPECT_TRUE(names.ok());
    std::sort(names->begin(), names->end());
    return *names;
  }
  TempDir dir_{"sluice_fault_env_test"};
  FaultEnv env_;
};

TEST_F(FaultEnvTest, FailsTheNthMatchingCallOnly) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/b*", .nth = 2, .times = 1, .err = ENOSPC});
  auto fd = env_.Open(Path("b1"), OpenMode::kWriteNew);
  ASSERT_TRUE(fd.ok());
  auto other = env_.Open(Path("a1"), OpenMode::kWriteNew);
  ASSERT_TRUE(env_.WriteAll(other->get(), Path("a1"), "x").ok()) << "the pattern does not match";
  ASSERT_TRUE(env_.WriteAll(fd->get(), Path("b1"), "1").ok());
  EXPECT_EQ(env_.WriteAll(fd->get(), Path("b1"), "2").ToString(),
            "i/o error: cannot write " + Path("b1") + ": No space left on device");
  EXPECT_EQ(env_.WriteAll(fd->get(), Path("b1"), "3").ToString(), "ok") << "one call only";
  EXPECT_EQ(env_.fired(), 1);
  EXPECT_EQ(env_.last_fired_path(), Path("b1"));
  EXPECT_EQ(*ReadFile(Path("b1")), "13") << "the failed write reached nothing";
}

TEST_F(FaultEnvTest, FailsEveryCallFromTheNthUntilCleared) {
  env_.Add({.op = FsOp::kRename, .nth = 1, .times = 0, .err = EIO});
  ASSERT_TRUE(WriteFileAtomic(Path("x"), "1").ok());
  EXPECT_EQ(env_.Rename(Path("x"), Path("y")).ToString(),
            "i/o error: cannot rename " + Path("x") + " onto " + Path("y") + ": Input/output error");
  EXPECT_FALSE(env_.Rename(Path("x"), Path("y")).ok());
  env_.Clear();
  EXPECT_TRUE(env_.Rename(Path("x"), Path("y")).ok());
  EXPECT_EQ(env_.fired(), 2);
}

// The shard cache's shared state map and byte locks: a write through one
// map is seen through another, a second description's exclusive lock
// conflicts, and each can be failed.
TEST_F(FaultEnvTest, SharedMapsAndByteLocksWorkAndFail) {
  EXPECT_TRUE(Env::Default()->IsDefault());
  EXPECT_FALSE(env_.IsDefault());
  auto a = env_.Open(Path("state"), OpenMode::kReadWrite);
  auto b = env_.Open(Path("state"), OpenMode::kReadWrite);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(env_.Truncate(a->get(), Path("state"), 16).ok());
  auto one = env_.MapShared(a->get(), Path("state"), 16);
  auto two = env_.MapShared(b->get(), Path("state"), 16);
  ASSERT_TRUE(one.ok() && two.ok());
  one->data()[3] = 'x';
  EXPECT_EQ(two->data()[3], 'x');
  EXPECT_EQ(*env_.TryLockByte(a->get(), Path("state"), 5, true), true);
  EXPECT_EQ(*env_.TryLockByte(b->get(), Path("state"), 5, false), false) << "held by a";
  EXPECT_EQ(*env_.TryLockByte(b->get(), Path("state"), 6, true), true) << "another byte";
  ASSERT_TRUE(env_.UnlockByte(a->get(), Path("state"), 5).ok());
  EXPECT_EQ(*env_.TryLockByte(b->get(), Path("state"), 5, false), true);

  env_.Add({.op = FsOp::kLock, .err = ENOLCK});
  env_.Add({.op = FsOp::kMap, .err = ENOMEM});
  EXPECT_EQ(env_.TryLockByte(a->get(), Path("state"), 7, true).status().ToString(),
            "i/o error: cannot lock byte 7 of " + Path("state") + ": No locks available");
  EXPECT_EQ(env_.MapShared(a->get(), Path("state"), 16).status().ToString(),
            "i/o error: cannot map " + Path("state") + ": Cannot allocate memory");
  EXPECT_EQ(env_.fired(), 2);
}

// Env's own ForEachInFolder goes through the double's ListFolder: a
// listing it fails fails there too.
TEST_F(FaultEnvTest, AFailedListingFailsForEachInFolderToo) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "abc").ok());
  env_.Add({.op = FsOp::kList, .err = EIO});
  int seen = 0;
  EXPECT_EQ(env_.ForEachInFolder(dir_.path(), [&](const char*) { ++seen; }).ToString(),
            "i/o error: cannot list " + dir_.path() + ": Input/output error");
  EXPECT_EQ(seen, 0);
  std::vector<std::string> names;
  ASSERT_TRUE(env_.ForEachInFolder(dir_.path(), [&](const char* name) { names.emplace_back(name); }).ok());
  EXPECT_EQ(names, std::vector<std::string>{"f"});
}

TEST_F(FaultEnvTest, EachKindOfCallCanFail) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "abc").ok());
  auto fd = Env::Default()->Open(Path("f"), OpenMode::kReadWrite);
  ASSERT_TRUE(fd.ok());
  env_.Add({.op = FsOp::kSync, .err = EIO});
  env_.Add({.op = FsOp::kTruncate, .err = EFBIG});
  env_.Add({.op = FsOp::kMap, .err = ENOMEM});
  env_.Add({.op = FsOp::kRemove, .err = EBUSY});
  env_.Add({.op = FsOp::kMakeFolder, .err = ENOSPC});
  env_.Add({.op = FsOp::kList, .err = EIO});
  env_.Add({.op = FsOp::kOpen, .err = EMFILE});
  env_.Add({.op = FsOp::kRead, .err = EIO});
  const std::string f = Path("f");
  EXPECT_EQ(env_.Sync(fd->get(), f).ToString(), "i/o error: cannot sync " + f + ": Input/output error");
  EXPECT_EQ(env_.Truncate(fd->get(), f, 1).ToString(),
            "i/o error: cannot truncate " + f + ": File too large");
  EXPECT_EQ(env_.Map(fd->get(), f).status().ToString(),
            "i/o error: cannot map " + f + ": Cannot allocate memory");
  EXPECT_EQ(env_.Remove(f).ToString(), "i/o error: cannot delete " + f + ": Device or resource busy");
  EXPECT_EQ(env_.MakeFolder(Path("d")).ToString(),
            "i/o error: cannot create folder " + Path("d") + ": No space left on device");
  EXPECT_EQ(env_.ListFolder(dir_.path()).status().ToString(),
            "i/o error: cannot list " + dir_.path() + ": Input/output error");
  EXPECT_EQ(env_.Open(f, OpenMode::kWriteTruncate).status().ToString(),
            "i/o error: cannot create " + f + ": Too many open files");
  char buf[4];
  EXPECT_EQ(env_.Read(fd->get(), f, buf, 4).status().ToString(),
            "i/o error: cannot read " + f + ": Input/output error");
  EXPECT_EQ(*ReadFile(f), "abc") << "nothing reached the file";
  EXPECT_EQ(Names(), std::vector<std::string>{"f"});
}

TEST_F(FaultEnvTest, AShortWriteIsContinuedByWriteAll) {
  env_.Add({.op = FsOp::kWrite, .nth = 1, .times = 3, .short_write = true, .short_bytes = 2});
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "0123456789", &env_).ok());
  EXPECT_EQ(*ReadFile(Path("f")), "0123456789");
  EXPECT_EQ(env_.fired(), 3) << "three short writes of 2 bytes, then one of the last 4";
}

TEST_F(FaultEnvTest, AFullDiskLeavesTheOldFileAndNoTemporary) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "old").ok());
  // Half the bytes go through, then the disk is full: a real full disk.
  env_.Add({.op = FsOp::kWrite, .nth = 1, .short_write = true, .short_bytes = 3});
  env_.Add({.op = FsOp::kWrite, .nth = 2, .err = ENOSPC});
  Status st = WriteFileAtomic(Path("f"), "newer", &env_);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(st.ToString(), "i/o error: cannot write " + tmp + ": No space left on device");
  auto parsed = ParseTempName(tmp.substr(tmp.rfind('/') + 1));
  ASSERT_TRUE(parsed.has_value()) << tmp << " is named by base/file.h's scheme";
  EXPECT_EQ(parsed->owner, ThisProcessTempOwner());
  EXPECT_EQ(tmp.substr(0, tmp.rfind('/') + 3), Path(".f"));
  EXPECT_EQ(*ReadFile(Path("f")), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"f"}) << "the temporary is gone";
  env_.Clear();
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "newer", &env_).ok());
  EXPECT_EQ(*ReadFile(Path("f")), "newer");
}

TEST_F(FaultEnvTest, AFailedRenameLeavesTheOldFileAndNoTemporary) {
  ASSERT_TRUE(WriteFileAtomic(Path("f"), "old").ok());
  env_.Add({.op = FsOp::kRename, .path_pattern = "*/f", .err = EIO});
  Status st = WriteFileAtomic(Path("f"), "new", &env_);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(st.ToString(),
            "i/o error: cannot rename " + tmp + " onto " + Path("f") + ": Input/output error");
  EXPECT_EQ(*ReadFile(Path("f")), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"f"});
}

TEST_F(FaultEnvTest, ACopyThatFailsReadingLeavesNothingAtItsTarget) {
  std::string big(100000, 'x');
  ASSERT_TRUE(WriteFileAtomic(Path("src"), big).ok());
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.dst.*", .nth = 3, .err = EIO});
  auto copied = CopyFileAtomic(Path("src"), Path("dst"), &env_);
  EXPECT_EQ(copied.status().ToString(),
            "i/o error: cannot write " + env_.last_fired_path() + ": Input/output error");
  EXPECT_EQ(Names(), std::vector<std::string>{"src"});
  env_.Clear();
  env_.Add({.op = FsOp::kRead, .path_pattern = "*/src", .nth = 1, .err = EIO});
  EXPECT_EQ(CopyFileAtomic(Path("src"), Path("dst"), &env_).status().ToString(),
            "i/o error: cannot read " + Path("src") + ": Input/output error");
  EXPECT_EQ(Names(), std::vector<std::string>{"src"});
  env_.Clear();
  auto done = CopyFileAtomic(Path("src"), Path("dst"), &env_);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, big.size());
  EXPECT_EQ(*ReadFile(Path("dst")), big);
}

TEST_F(FaultEnvTest, ConfinedFolderCallsGoThroughTheEnv) {
  ASSERT_TRUE(MakeDirs(Path("root/a")).ok());
  ASSERT_TRUE(WriteFileAtomic(Path("root/a/x"), "1").ok());
  auto dir = ConfinedDir::Open(Path("root"), &env_);
  ASSERT_TRUE(dir.ok());
  env_.Add({.op = FsOp::kRename, .path_pattern = "*/a/y", .err = EXDEV});
  EXPECT_EQ(dir->Rename("a/x", "a/y").ToString(),
            "i/o error: cannot rename " + Path("root/a/x") + " onto " + Path("root/a/y") +
                ": Invalid cross-device link");
  env_.Add({.op = FsOp::kMakeFolder, .path_pattern = "*/root/b", .err = ENOSPC});
  EXPECT_EQ(dir->OpenFolder("b/c", true).status().ToString(),
            "i/o error: cannot create folder " + Path("root/b") + ": No space left on device");
  EXPECT_TRUE(dir->Rename("a/x", "a/y").ok());
}

}  // namespace
}  // namespace sluice::testing

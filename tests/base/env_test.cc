#include "base/env.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/mapped_file.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

class EnvTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return JoinPath(dir_.path(), name); }
  Env* env_ = Env::Default();
  testing::TempDir dir_{"sluice_env_test"};
};

TEST_F(EnvTest, ErrorsSayWhatFailedOnWhichPathAndKeepTheErrno) {
  const std::string missing = Path("missing");
  auto opened = env_->Open(missing, OpenMode::kRead);
  EXPECT_EQ(opened.status().ToString(),
            "not found: cannot open " + missing + ": No such file or directory");
  EXPECT_EQ(opened.status().os_error(), ENOENT);
  EXPECT_EQ(opened.status().WithContext("fetching").os_error(), ENOENT);

  ASSERT_TRUE(WriteFileAtomic(Path("f"), "x").ok());
  auto again = env_->Open(Path("f"), OpenMode::kWriteNew);
  EXPECT_EQ(again.status().ToString(), "i/o error: cannot create " + Path("f") + ": File exists");
  EXPECT_EQ(again.status().os_error(), EEXIST);

  EXPECT_EQ(env_->Rename(missing, Path("g")).ToString(),
            "not found: cannot rename " + missing + " onto " + Path("g") +
                ": No such file or directory");
  EXPECT_EQ(env_->Remove(missing).ToString(),
            "not found: cannot delete " + missing + ": No such file or directory");
  EXPECT_EQ(env_->Stat(missing).status().ToString(),
            "not found: cannot stat " + missing + ": No such file or directory");
  EXPECT_EQ(env_->ListFolder(missing).status().ToString(),
            "not found: cannot open folder " + missing + ": No such file or directory");
  EXPECT_EQ(env_->MakeFolder(Path("f/sub")).ToString(),
            "not found: cannot create folder " + Path("f/sub") + ": Not a directory");
  EXPECT_EQ(Status(StatusCode::kIoError, "plain").os_error(), 0);
}

TEST_F(EnvTest, WritesReadsTruncatesAndMapsExactBytes) {
  const std::string path = Path("data");
  auto fd = env_->Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_TRUE(env_->WriteAll(fd->get(), path, "hello world").ok());
  ASSERT_TRUE(env_->PWriteAll(fd->get(), path, "W", 6).ok());
  ASSERT_TRUE(env_->Sync(fd->get(), path).ok());
  ASSERT_TRUE(env_->Sync(fd->get(), path, /*data_only=*/true).ok());
  char buf[32] = {};
  auto got = env_->PReadFull(fd->get(), path, buf, sizeof buf, 0);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::string(buf, *got), "hello World");
  ASSERT_TRUE(env_->Truncate(fd->get(), path, 5).ok());
  EXPECT_EQ(env_->StatOpen(fd->get(), path)->st_size, 5);
  auto map = env_->Map(fd->get(), path);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->data(), "hello");
  ASSERT_TRUE(env_->Truncate(fd->get(), path, 0).ok());
  auto empty = env_->Map(fd->get(), path);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);

  auto log = env_->Open(Path("log"), OpenMode::kAppend);
  ASSERT_TRUE(env_->WriteAll(log->get(), Path("log"), "a").ok());
  auto log2 = env_->Open(Path("log"), OpenMode::kAppend);
  ASSERT_TRUE(env_->WriteAll(log2->get(), Path("log"), "b").ok());
  EXPECT_EQ(*ReadFile(Path("log")), "ab");
  ASSERT_TRUE(env_->Open(Path("log"), OpenMode::kWriteTruncate).ok());
  EXPECT_EQ(*ReadFile(Path("log")), "");
}

TEST_F(EnvTest, CreatesWithTheGivenPermissionsAndRefusesLinksWhenAsked) {
  const mode_t old = ::umask(022);
  ASSERT_TRUE(env_->Open(Path("secret"), OpenMode::kWriteNew, {kOwnerOnlyFileMode, true}).ok());
  ASSERT_TRUE(env_->Open(Path("plain"), OpenMode::kWriteNew).ok());
  ASSERT_TRUE(env_->MakeFolder(Path("private"), 0700).ok());
  ASSERT_TRUE(env_->MakeFolder(Path("private"), 0700).ok()) << "an existing folder is fine";
  ::umask(old);
  EXPECT_EQ(env_->Stat(Path("secret"))->st_mode & 0777, 0600u);
  EXPECT_EQ(env_->Stat(Path("plain"))->st_mode & 0777, 0644u);
  EXPECT_EQ(env_->Stat(Path("private"))->st_mode & 0777, 0700u);

  ASSERT_EQ(::symlink(Path("plain").c_str(), Path("link").c_str()), 0);
  auto refused = env_->Open(Path("link"), OpenMode::kRead, {kNewFileMode, false});
  EXPECT_EQ(refused.status().os_error(), ELOOP);
  EXPECT_TRUE(env_->Open(Path("link"), OpenMode::kRead).ok());
  EXPECT_TRUE(S_ISLNK(env_->Stat(Path("link"), /*follow_links=*/false)->st_mode));
  EXPECT_TRUE(S_ISREG(env_->Stat(Path("link"))->st_mode));
}

TEST_F(EnvTest, NamesRelativeToAnOpenFolder) {
  ASSERT_TRUE(env_->MakeFolder(Path("sub")).ok());
  auto folder = env_->OpenFolder(Path("sub"));
  ASSERT_TRUE(folder.ok());
  // An FsPath views its strings: they outlive it here.
  const std::string a_path = Path("sub/a"), b_path = Path("sub/b");
  const FsPath a(folder->get(), "a", a_path);
  const FsPath b(folder->get(), "b", b_path);
  auto fd = env_->Open(a, OpenMode::kWriteNew);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(env_->WriteAll(fd->get(), a.path, "123").ok());
  ASSERT_TRUE(env_->Rename(a, b).ok());
  EXPECT_EQ(env_->Stat(b)->st_size, 3);
  auto names = env_->ListFolder(Path("sub"));
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, std::vector<std::string>{"b"});
  ASSERT_TRUE(env_->Remove(b).ok());
  EXPECT_TRUE(env_->ListFolder(FsPath(folder->get(), ".", Path("sub")))->empty());
}

TEST_F(EnvTest, ListsEveryNameButDots) {
  for (const char* name : {"x", ".hidden", "y"}) ASSERT_TRUE(WriteFileAtomic(Path(name), "").ok());
  ASSERT_TRUE(env_->MakeFolder(Path("d")).ok());
  auto names = env_->ListFolder(dir_.path());
  ASSERT_TRUE(names.ok());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{".hidden", "d", "x", "y"}));
}

// The names one at a time, in ListFolder's order, and its error for a
// folder that cannot be listed.
TEST_F(EnvTest, ForEachInFolderGivesListFoldersNamesInItsOrder) {
  for (const char* name : {"x", ".hidden", "y"}) ASSERT_TRUE(WriteFileAtomic(Path(name), "").ok());
  ASSERT_TRUE(env_->MakeFolder(Path("d")).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(env_->ForEachInFolder(dir_.path(), [&](const char* name) { names.emplace_back(name); }).ok());
  EXPECT_EQ(names, *env_->ListFolder(dir_.path()));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".hidden", "d", "x", "y"}));
  const std::string missing = Path("missing");
  EXPECT_EQ(env_->ForEachInFolder(missing, [](const char*) {}).ToString(),
            "not found: cannot open folder " + missing + ": No such file or directory");
}

}  // namespace
}  // namespace sluice

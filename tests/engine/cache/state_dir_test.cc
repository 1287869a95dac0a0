// Where a cache keeps its state: outside the cache folder, in a private
// per-user folder keyed by the folder's identity (state_dir.h).
#include "engine/cache/state_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/cache/shard_cache.h"
#include "tests/common/scoped_env.h"
#include "tests/engine/cache/cache_test_util.h"

namespace sluice {
namespace {

using cache_test::ListFiles;
using cache_test::LoggingFetch;
using cache_test::MakeSpecs;
using cache_test::ScratchDir;
using testing::ScopedEnv;

// $TMPDIR at `dir`, with no SLUICE_CACHE_STATE_DIR to override it, so the
// per-user folder's place and permissions can be tampered with safely.
class TmpDirScope {
 public:
  explicit TmpDirScope(const std::string& dir)
      : env_({{"TMPDIR", dir}, {"SLUICE_CACHE_STATE_DIR", std::nullopt}}) {}

 private:
  ScopedEnv env_;
};

std::string Identity(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return std::to_string(uint64_t(st.st_dev)) + "-" + std::to_string(uint64_t(st.st_ino));
}

TEST(CacheStateDir, PrivatePerUserFolderKeyedByIdentity) {
  ScratchDir tmp, data;
  TmpDirScope scope(tmp.path());
  const std::string root = data.path() + "/cache";
  ASSERT_TRUE(MakeDirs(root).ok());
  ASSERT_EQ(::symlink(root.c_str(), (data.path() + "/link").c_str()), 0);
  auto dir = CacheStateDir(root);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  const std::string user = tmp.path() + "/sluice-" + std::to_string(::getuid());
  EXPECT_EQ(*dir, user + "/" + Identity(root));
  // Every spelling of the folder finds the same state.
  EXPECT_EQ(*CacheStateDir(data.path() + "/link"), *dir);
  EXPECT_EQ(*CacheStateDir(root + "/./"), *dir);
  struct stat st;
  ASSERT_EQ(::lstat(user.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(CacheStateDir, RefusesAFolderOthersCanReach) {
  ScratchDir tmp, data;
  TmpDirScope scope(tmp.path());
  const std::string user = tmp.path() + "/sluice-" + std::to_string(::getuid());
  ASSERT_EQ(::mkdir(user.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(user.c_str(), 0777), 0);
  auto dir = CacheStateDir(data.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().ToString(),
            "invalid argument: cache state folder " + user +
                " must belong to this user with no access for others (mode 0700) "
                "(SLUICE_CACHE_STATE_DIR chooses another place)");
}

TEST(CacheStateDir, RefusesALinkAsThePerUserFolder) {
  ScratchDir tmp, data, elsewhere;
  TmpDirScope scope(tmp.path());
  const std::string user = tmp.path() + "/sluice-" + std::to_string(::getuid());
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), user.c_str()), 0);
  auto dir = CacheStateDir(data.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().ToString(),
            "invalid argument: cache state folder " + user +
                " is not a folder (a symbolic link or a file is refused) "
                "(SLUICE_CACHE_STATE_DIR chooses another place)");
}

// Containers of one node sharing a host folder as their cache, each with its
// own /tmp, coordinate through a state root they also share.
TEST(CacheStateDir, SluiceCacheStateDirChoosesTheRoot) {
  ScratchDir tmp, shared, data;
  TmpDirScope scope(tmp.path());
  {
    ScopedEnv chosen("SLUICE_CACHE_STATE_DIR", shared.path());
    auto dir = CacheStateDir(data.path());
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    EXPECT_EQ(*dir, shared.path() + "/sluice-" + std::to_string(::getuid()) + "/" +
                        Identity(data.path()));
  }
  ScopedEnv relative("SLUICE_CACHE_STATE_DIR", "state");
  auto dir = CacheStateDir(data.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().ToString(),
            "invalid argument: SLUICE_CACHE_STATE_DIR must be an absolute path, not 'state'");
}

TEST(CacheStateDir, MissingCacheFolderIsAnError) {
  ScratchDir data;
  auto dir = CacheStateDir(data.path() + "/none");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().ToString().find(data.path() + "/none"), std::string::npos)
      << dir.status().ToString();
}

// The cache folder holds the shards and nothing of Sluice's (code written
// for Mosaic lists it and compares it with the remote's listing).
TEST(CacheStateDir, CacheFolderHoldsOnlyShards) {
  ScratchDir data;
  const std::string root = data.path() + "/cache";
  CacheOptions o;
  o.root = root;
  auto c = ShardCache::Open(o, MakeSpecs({10, 20}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Acquire(1, LoggingFetch(1, 20, data.path() + "/log")).ok());
  EXPECT_EQ(ListFiles(root), std::vector<std::string>{"s1"});
  EXPECT_TRUE(FileExists(*CacheStateDir(root) + "/state"));
}

// The state outlives the processes: the first user of a cache recounts the
// files, which may have been deleted (or copied in) while nobody used it.
TEST(CacheStateDir, FirstUserRecountsFromTheFiles) {
  ScratchDir data;
  CacheOptions o;
  o.root = data.path() + "/cache";
  const std::string log = data.path() + "/log";
  {
    auto c = ShardCache::Open(o, MakeSpecs({10, 20}));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE((*c)->Acquire(0, LoggingFetch(0, 10, log)).ok());
    ASSERT_TRUE((*c)->Acquire(1, LoggingFetch(1, 20, log)).ok());
    EXPECT_EQ((*c)->bytes_used(), 30u);
  }
  ASSERT_EQ(::unlink((o.root + "/s1").c_str()), 0);
  auto c = ShardCache::Open(o, MakeSpecs({10, 20}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->bytes_used(), 10u);
}

// An age-based cleaner of /tmp (systemd-tmpfiles, tmpreaper) deletes files
// whose times are old. Nothing writes the lock file and the state file may
// go unwritten for long, so every open of the cache marks both in use.
TEST(CacheStateDir, OpeningACacheRefreshesTheStateFilesTimes) {
  ScratchDir data;
  CacheOptions o;
  o.root = data.path() + "/cache";
  ASSERT_TRUE(ShardCache::Open(o, MakeSpecs({10, 20})).ok());
  const std::string state = *CacheStateDir(o.root);
  const struct timespec y2000[2] = {{946684800, 0}, {946684800, 0}};
  for (const char* name : {"lock", "state"}) {
    ASSERT_EQ(::utimensat(AT_FDCWD, (state + "/" + name).c_str(), y2000, 0), 0) << name;
  }
  const time_t before = ::time(nullptr) - 1;  // file times come from a coarser clock
  auto c = ShardCache::Open(o, MakeSpecs({10, 20}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const char* name : {"lock", "state"}) {
    struct stat st;
    ASSERT_EQ(::stat((state + "/" + name).c_str(), &st), 0) << name;
    EXPECT_GE(st.st_mtime, before) << name;
    EXPECT_GE(st.st_atime, before) << name;
  }
}

}  // namespace
}  // namespace sluice

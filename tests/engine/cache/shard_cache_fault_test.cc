// What a full disk or a failing write, rename or folder creation does to a
// download into the shard cache: the error names the cache and the shard,
// nothing is visible under the shard's name, the temporary is gone, the
// room is given back, the shards already there stay, and the next attempt
// succeeds once the fault is gone.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/cache/shard_cache.h"
#include "tests/base/fault_env.h"
#include "tests/engine/cache/cache_test_util.h"

namespace sluice {
namespace {

using cache_test::ListFiles;
using cache_test::ShardBytes;
using cache_test::Slurp;
using testing::FsFault;
using testing::FaultEnv;
using testing::FsOp;

class ShardCacheFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The remote: two shards of 100 000 bytes (several writes each).
    ASSERT_TRUE(MakeDirs(remote() + "/data").ok());
    for (size_t i = 0; i < 2; ++i) {
      ASSERT_TRUE(WriteFileAtomic(JoinPath(remote(), Name(i)), ShardBytes(i, kBytes)).ok());
    }
    CacheOptions o;
    o.root = root();
    o.cache_limit = 10 * kBytes;
    o.env = &env_;
    std::vector<ShardSpec> specs;
    for (size_t i = 0; i < 2; ++i) specs.push_back({Name(i), kBytes});
    auto c = ShardCache::Open(o, specs);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cache_ = std::move(c).value();
  }

  static std::string Name(size_t i) { return "data/s" + std::to_string(i); }
  std::string root() const { return dir_.path() + "/cache"; }
  std::string remote() const { return dir_.path() + "/remote"; }

  // A download from the remote folder through the cache's Env, as a local
  // remote's fetch does (CopyFileAtomic).
  Result<ShardPin> Download(size_t i) {
    return cache_->Acquire(i, [this, i](const std::string& tmp) {
      return CopyFileAtomic(JoinPath(remote(), Name(i)), tmp, &env_).status();
    });
  }

  static constexpr uint64_t kBytes = 100000;
  cache_test::ScratchDir dir_;
  FaultEnv env_;
  std::unique_ptr<ShardCache> cache_;
};

TEST_F(ShardCacheFaultTest, AFullDiskMidDownloadLeavesNothingAndTheRetrySucceeds) {
  auto kept = Download(1);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  kept->Release();
  // The third 16 KiB write is cut short, the fourth finds the disk full.
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.s0.sluice-tmp.*", .nth = 3,
            .short_write = true, .short_bytes = 100});
  env_.Add({.op = FsOp::kWrite, .path_pattern = "*/.s0.sluice-tmp.*", .nth = 4, .err = ENOSPC});
  auto failed = Download(0);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(failed.status().ToString(),
            "i/o error: shard cache '" + root() + "': fetching shard 0 'data/s0': cannot write " +
                tmp + ": No space left on device");
  EXPECT_EQ(tmp.rfind(root() + "/data/.s0.sluice-tmp.", 0), 0u) << tmp;
  EXPECT_EQ(env_.fired(), 2);
  EXPECT_FALSE(cache_->IsPresent(0));
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{"data/s1"})
      << "no partial file under the shard's name, no temporary";
  EXPECT_EQ(cache_->bytes_used(), kBytes) << "the failed fetch's room is given back";
  EXPECT_EQ(Slurp(root() + "/data/s1"), ShardBytes(1, kBytes)) << "the shard already there stays";

  env_.Clear();
  auto retried = Download(0);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(Slurp(retried->path()), ShardBytes(0, kBytes));
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"data/s0", "data/s1"}));
  EXPECT_EQ(cache_->bytes_used(), 2 * kBytes);
}

TEST_F(ShardCacheFaultTest, AFailedCommitRenameLeavesNothingAndTheRetrySucceeds) {
  env_.Add({.op = FsOp::kRename, .path_pattern = "*/data/s0", .err = EIO});
  auto failed = Download(0);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(failed.status().ToString(),
            "i/o error: shard cache '" + root() + "': fetching shard 0 'data/s0': cannot rename " +
                tmp + " onto " + root() + "/data/s0: Input/output error");
  EXPECT_EQ(tmp.rfind(root() + "/data/.s0.sluice-tmp.", 0), 0u) << tmp;
  EXPECT_FALSE(cache_->IsPresent(0));
  EXPECT_TRUE(ListFiles(root()).empty());
  EXPECT_EQ(cache_->bytes_used(), 0u);

  env_.Clear();
  auto retried = Download(0);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(Slurp(retried->path()), ShardBytes(0, kBytes));
}

TEST_F(ShardCacheFaultTest, AFolderThatCannotBeMadeFailsTheFetchBeforeItStarts) {
  env_.Add({.op = FsOp::kMakeFolder, .path_pattern = "*/cache/data", .err = ENOSPC});
  int fetches = 0;
  auto failed = cache_->Acquire(0, [&](const std::string&) {
    ++fetches;
    return Status::Ok();
  });
  EXPECT_EQ(failed.status().ToString(),
            "i/o error: shard cache '" + root() + "': fetching shard 0 'data/s0': cannot create "
            "folder " + root() + "/data: No space left on device");
  EXPECT_EQ(fetches, 0);
  EXPECT_EQ(cache_->bytes_used(), 0u);
  env_.Clear();
  EXPECT_TRUE(Download(0).ok());
}

}  // namespace
}  // namespace sluice

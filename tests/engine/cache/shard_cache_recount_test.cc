// The recount of a cache folder's first user (shard_cache_recount.cc): the
// exact bytes each shard accounts after it, whatever lies in the shards'
// places, and that it stats only the names its folders list.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/env.h"
#include "base/file.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/shard_cache.h"
#include "engine/cache/shard_cache_internal.h"
#include "engine/cache/state_dir.h"
#include "tests/base/fault_env.h"
#include "tests/base/forwarding_env.h"
#include "tests/engine/cache/cache_test_util.h"

namespace sluice {
namespace {

using cache_test::ListFiles;
using cache_test::OpenError;
using cache_test::ScratchDir;
using cache_test::WriteWhole;

// Env::Default() counting the stats of names beneath `root`.
class StatCountingEnv final : public testing::ForwardingEnv {
 public:
  explicit StatCountingEnv(std::string root) : root_(std::move(root) + "/") {}
  int stats() const { return stats_; }

  Result<struct stat> Stat(const FsPath& file, bool follow_links) override {
    if (file.path.starts_with(root_)) ++stats_;
    return ForwardingEnv::Stat(file, follow_links);
  }

 private:
  std::string root_;
  std::atomic<int> stats_{0};
};

class ShardCacheRecountTest : public ::testing::Test {
 protected:
  std::string root() const { return dir_.path() + "/cache"; }
  std::string At(const std::string& rel) const { return root() + "/" + rel; }

  // Opens the cache (its first user: a recount) and closes it again; the
  // bytes each shard accounts, read from the state file it leaves.
  std::vector<uint64_t> Recount(const std::vector<ShardSpec>& specs, bool evictable = true,
                                Env* env = Env::Default()) {
    CacheOptions o;
    o.root = root();
    o.evictable = evictable;
    o.env = env;
    auto c = ShardCache::Open(o, specs);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return {};
    std::vector<uint64_t> out(specs.size());
    uint64_t sum = 0;
    const std::string state = *CacheStateDir(root()) + "/" + cache_layout::kStateFile;
    const int fd = ::open(state.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << state;
    for (size_t i = 0; i < specs.size(); ++i) {
      cache_layout::CacheShardRecord r{};
      const off_t at = sizeof(cache_layout::CacheStateHeader) + i * sizeof(r);
      EXPECT_EQ(::pread(fd, &r, sizeof(r), at), static_cast<ssize_t>(sizeof(r)));
      out[i] = r.accounted;
      sum += r.accounted;
    }
    ::close(fd);
    EXPECT_EQ((*c)->bytes_used(), sum);
    return out;
  }

  // Recount of `specs` as given, then sorted by name (Open finds a listed
  // name another way in a sorted list), on the same files; the bytes in the
  // order given, which both must agree on.
  std::vector<uint64_t> RecountBothOrders(const std::vector<ShardSpec>& specs,
                                          bool evictable = true, Env* env = Env::Default()) {
    const std::vector<uint64_t> given = Recount(specs, evictable, env);
    std::vector<size_t> order(specs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return specs[a].name < specs[b].name; });
    std::vector<ShardSpec> sorted;
    for (size_t i : order) sorted.push_back(specs[i]);
    EXPECT_FALSE(std::is_sorted(order.begin(), order.end())) << "the test's list is sorted already";
    const std::vector<uint64_t> got = Recount(sorted, evictable, env);
    std::vector<uint64_t> back(specs.size());
    for (size_t k = 0; k < order.size() && k < got.size(); ++k) back[order[k]] = got[k];
    EXPECT_EQ(back, given) << "sorted";
    return given;
  }

  void Folder(const std::string& rel) { ASSERT_TRUE(MakeDirs(At(rel)).ok()); }
  // A file of `bytes` bytes at `rel`, its folders made.
  void File(const std::string& rel, size_t bytes) {
    const size_t slash = rel.rfind('/');
    if (slash != std::string::npos) Folder(rel.substr(0, slash));
    WriteWhole(At(rel), std::string(bytes, 'x'));
  }

  ScratchDir dir_;
};

// Only a regular file of the shard's size counts, in the root and in
// nested folders, on the open that makes the state and on a later job's.
TEST_F(ShardCacheRecountTest, CountsRegularFilesOfTheirSizeOnly) {
  const std::vector<ShardSpec> specs = {
      {"s0", 10},      // right size, no folder
      {"a/s1", 11},    // wrong size
      {"a/b/s2", 12},  // a folder in its place
      {"c/s3", 13},    // a link to a file of its size
      {"s4", 14},      // missing
      {"a/s5", 15},    // right size, beside others
      {"a/b/s6", 16},  // right size, two folders down
      {"d/s7", 17},    // its folder missing
      {"s8", 18},      // right size, listed after the folders
      {"s8x/s9", 19},  // a file where its folder should be
  };
  Folder("a/b/s2");
  Folder("c");
  File("s0", 10);
  File("a/s1", 12);
  File("target", 13);
  ASSERT_EQ(::symlink(At("target").c_str(), At("c/s3").c_str()), 0);
  File("a/s5", 15);
  File("a/b/s6", 16);
  File("a/other", 3);
  File("s8", 18);
  File("s8x", 19);
  EXPECT_EQ(RecountBothOrders(specs), (std::vector<uint64_t>{10, 0, 0, 0, 0, 15, 16, 0, 18, 0}));

  // Between two jobs: files deleted, copied in, grown, replaced by a folder.
  ASSERT_EQ(::unlink(At("s0").c_str()), 0);
  File("s4", 14);
  File("a/s1", 11);
  File("d/s7", 17);
  ASSERT_EQ(::unlink(At("a/b/s6").c_str()), 0);
  Folder("a/b/s6");
  File("a/s5", 16);
  EXPECT_EQ(RecountBothOrders(specs), (std::vector<uint64_t>{0, 11, 0, 0, 14, 0, 0, 17, 18, 0}));
}

// A companion counts beside its shard while both are present, never alone.
TEST_F(ShardCacheRecountTest, CompanionsCountBesideTheirShard) {
  const std::vector<ShardSpec> specs = {
      {"z/s0", 10, 0, "z/s0.zip", 4},   // both present
      {"z/s1", 11, 0, "z/s1.zip", 5},   // companion missing
      {"z/s2", 12, 0, "zip/s2.zip", 6},  // shard missing, companion present
      {"s3", 13, 0, "zip/s3.zip", 7},    // companion in another folder
  };
  File("z/s0", 10);
  File("z/s0.zip", 4);
  File("z/s1", 11);
  File("zip/s2.zip", 6);
  File("s3", 13);
  File("zip/s3.zip", 7);
  EXPECT_EQ(RecountBothOrders(specs), (std::vector<uint64_t>{14, 11, 0, 20}));
}

// A folder read in place (no remote) follows the user's links, a shard's
// own and a folder's on its way; a cache with a remote follows neither.
TEST_F(ShardCacheRecountTest, LinksAreFollowedOnlyInAFolderReadInPlace) {
  ScratchDir elsewhere;
  WriteWhole(elsewhere.path() + "/f", std::string(10, 'x'));
  ASSERT_TRUE(MakeDirs(elsewhere.path() + "/d").ok());
  WriteWhole(elsewhere.path() + "/d/s1", std::string(11, 'x'));
  ASSERT_TRUE(MakeDirs(root()).ok());
  ASSERT_EQ(::symlink((elsewhere.path() + "/f").c_str(), At("s0").c_str()), 0);
  ASSERT_EQ(::symlink((elsewhere.path() + "/d").c_str(), At("l").c_str()), 0);
  File("s2", 12);
  const std::vector<ShardSpec> specs = {{"s0", 10}, {"l/s1", 11}, {"s2", 12}};  // unsorted: 'l' < 's'
  EXPECT_EQ(RecountBothOrders(specs, /*evictable=*/false), (std::vector<uint64_t>{10, 11, 12}));
  EXPECT_EQ(RecountBothOrders(specs, /*evictable=*/true), (std::vector<uint64_t>{0, 0, 12}));
}

// Many shards in one folder, every seventh present and every eleventh of
// those of the wrong size: each is told apart by its whole name.
TEST_F(ShardCacheRecountTest, ManyShardsOfOneFolderAreMatchedByName) {
  std::vector<ShardSpec> specs;
  std::vector<uint64_t> expected;
  for (size_t i = 0; i < 1000; ++i) {
    specs.push_back({"part/" + std::to_string(i) + ".mds", 100 + i});
    expected.push_back(0);
    if (i % 7 != 0) continue;
    const bool wrong = i % 11 == 0;
    File(specs.back().name, wrong ? 99 : 100 + i);
    if (!wrong) expected.back() = 100 + i;
  }
  File("part/1000.mds", 1100);  // no such shard
  File("part/5.md", 105);       // a prefix of one's name
  EXPECT_EQ(RecountBothOrders(specs), expected);
}

// A folder that cannot be listed is recounted shard by shard, as exactly.
TEST_F(ShardCacheRecountTest, AFolderThatCannotBeListedIsRecountedShardByShard) {
  File("p/s0", 10);
  File("p/s1", 5);
  File("s2", 12);
  testing::FaultEnv env;
  env.Add({.op = testing::FsOp::kList, .path_pattern = At("p") + "*", .times = 0});
  EXPECT_EQ(RecountBothOrders({{"s2", 12}, {"p/s0", 10}, {"p/s1", 11}, {"p/s3", 13}}, true, &env),
            (std::vector<uint64_t>{12, 10, 0, 0}));
  EXPECT_GE(env.fired(), 2);
}

// The recount costs a stat of each name its folders list, not one a shard:
// a cache of 500 shards holding 3 stats 3 names (and a missing folder none),
// whether or not the list is sorted.
TEST_F(ShardCacheRecountTest, StatsOnlyTheNamesItsFoldersList) {
  std::vector<ShardSpec> specs;
  for (size_t i = 0; i < 400; ++i) specs.push_back({"p/" + std::to_string(i), 10});
  for (size_t i = 0; i < 100; ++i) specs.push_back({"missing/" + std::to_string(i), 10});
  File("p/7", 10);
  File("p/300", 10);
  File("p/301", 5);
  File("p/unrelated", 10);
  StatCountingEnv env(root());
  std::vector<uint64_t> got = RecountBothOrders(specs, true, &env);
  EXPECT_EQ(env.stats(), 6);  // 3 in each order
  std::vector<uint64_t> expected(500, 0);
  expected[7] = expected[300] = 10;
  EXPECT_EQ(got, expected);
}

// The recount numbers shards in 32 bits: a list of more is refused by
// count, not numbered wrongly.
TEST(ShardCacheRecountCountTest, NumbersAtMostUint32MaxShards) {
  EXPECT_TRUE(cache_internal::CheckRecountShardCount(0).ok());
  EXPECT_TRUE(cache_internal::CheckRecountShardCount(UINT32_MAX).ok());
  EXPECT_EQ(cache_internal::CheckRecountShardCount(uint64_t{UINT32_MAX} + 1).ToString(),
            "invalid argument: 4294967296 shards: a cache's recount numbers at most 4294967295");
}

// The sweep of dead fetchers' temporaries reaches every folder of a shard
// or companion, however the list interleaves them.
TEST_F(ShardCacheRecountTest, OpenSweepsEveryShardAndCompanionFolder) {
  ASSERT_NE(ThisProcessTempOwner().start, 0u) << "needs /proc to tell processes apart";
  const std::vector<ShardSpec> specs = {
      {"a/s0", 10}, {"b/s1", 10}, {"a/s2", 10, 0, "c/s2.zip", 3}, {"s3", 10}};
  const std::vector<std::string> gone = {
      TempPathFor("a/s0", cache_test::GoneOwner(), 1), TempPathFor("b/s1", cache_test::GoneOwner(), 2),
      TempPathFor("c/s2.zip", cache_test::GoneOwner(), 3), TempPathFor("s3", cache_test::GoneOwner(), 4)};
  for (const std::string& f : gone) File(f, 7);
  File("b/kept", 1);
  Recount(specs);
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{"b/kept"});
}

// Repeated and bad names are refused with the same error whether or not the
// list is in order, the first offender by number named.
TEST_F(ShardCacheRecountTest, RepeatedNamesAreRefusedInAnyOrder) {
  auto err = [&](std::vector<ShardSpec> specs) { return OpenError(root(), std::move(specs)); };
  const std::string p = "invalid argument: shard cache '" + root() + "': ";
  EXPECT_EQ(err({{"a", 1}, {"b", 1}, {"b", 1}}), p + "shard 2 name 'b' is used by an earlier shard too");
  EXPECT_EQ(err({{"b", 1}, {"a", 1}, {"b", 1}}), p + "shard 2 name 'b' is used by an earlier shard too");
  EXPECT_EQ(err({{"a", 1}, {"c", 1}, {"b", 1}, {"a", 1}, {"c", 1}}),
            p + "shard 3 name 'a' is used by an earlier shard too");
  EXPECT_EQ(err({{"a", 1}, {"b", 1}, {"a", 1}, {"/x", 1}}),
            p + "shard 2 name 'a' is used by an earlier shard too");
  EXPECT_EQ(err({{"a", 1}, {"b", 1}, {"/x", 1}, {"a", 1}}),
            p + "shard 2 name '/x' is absolute; shard names are relative to the cache folder");
  EXPECT_EQ(err({{"a", 1}, {"b", 1}, {"c", 1}}), "ok");
  EXPECT_EQ(err({{"c", 1}, {"b", 1}, {"a", 1}}), "ok");
}

}  // namespace
}  // namespace sluice

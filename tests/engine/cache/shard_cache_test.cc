// Single-process behaviour of the shard cache: hits and fetches, exact
// errors, LRU eviction, pins, timeouts, refetch, reopen and repair.
#include "engine/cache/shard_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/state_dir.h"
#include "tests/engine/cache/cache_test_util.h"

namespace sluice {
namespace {

using cache_test::CountFetches;
using cache_test::ListFiles;
using cache_test::LoggingFetch;
using cache_test::MakeSpecs;
using cache_test::OpenError;
using cache_test::ScratchDir;
using cache_test::ShardBytes;
using namespace std::chrono_literals;

// Another thread's fetch of shard 0 (100 bytes) through `c`, held inside its
// fetch function until Finish(): its own lock, as another process's would be.
// The constructor returns once the fetch holds the shard's download.
class HeldFetch {
 public:
  explicit HeldFetch(ShardCache& c) {
    thread_ = std::thread([this, &c] {
      auto pin = c.Acquire(0, [this](const std::string& tmp) {
        started_.set_value();
        go_.wait();
        cache_test::WriteWhole(tmp, ShardBytes(0, 100));
        return Status::Ok();
      });
      EXPECT_TRUE(pin.ok()) << pin.status().ToString();
    });
    started_.get_future().wait();
  }
  ~HeldFetch() { Finish(); }
  // Lets the fetch write the shard and waits for the thread.
  void Finish() {
    if (!thread_.joinable()) return;
    release_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> started_, release_;
  std::shared_future<void> go_ = release_.get_future().share();
  std::thread thread_;
};

class ShardCacheTest : public ::testing::Test {
 protected:
  std::string root() const { return dir_.path() + "/cache"; }
  std::string log() const { return dir_.path() + "/fetch.log"; }

  std::unique_ptr<ShardCache> Open(std::vector<uint64_t> sizes, uint64_t limit = 0,
                                   bool evictable = true,
                                   std::chrono::milliseconds timeout = 5s) {
    CacheOptions o;
    o.root = root();
    o.cache_limit = limit;
    o.evictable = evictable;
    o.wait_timeout = timeout;
    auto c = ShardCache::Open(o, MakeSpecs(sizes));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // Acquires with the logging fetch and checks the bytes behind the pin.
  ShardPin Get(ShardCache& c, size_t i) {
    auto pin = c.Acquire(i, LoggingFetch(i, c.spec(i).bytes, log()));
    EXPECT_TRUE(pin.ok()) << pin.status().ToString();
    if (!pin.ok()) return {};
    auto bytes = ReadFile(pin->path());
    EXPECT_TRUE(bytes.ok() && *bytes == ShardBytes(i, c.spec(i).bytes)) << "shard " << i;
    return std::move(pin).value();
  }

  std::vector<size_t> Present(const ShardCache& c) {
    std::vector<size_t> out;
    for (size_t i = 0; i < c.shard_count(); ++i) {
      if (c.IsPresent(i)) out.push_back(i);
    }
    return out;
  }

  // The cache's state file (kept outside the folder, see state_dir.h).
  std::string StateFile() const {
    auto dir = CacheStateDir(root());
    EXPECT_TRUE(dir.ok()) << dir.status().ToString();
    return dir.ok() ? *dir + "/" + cache_layout::kStateFile : "<no state folder>";
  }
  ScratchDir dir_;
};

TEST_F(ShardCacheTest, FetchesOnceThenHits) {
  auto c = Open({100, 250});
  {
    ShardPin p = Get(*c, 1);
    EXPECT_EQ(p.path(), root() + "/s1");
    EXPECT_EQ(p.bytes(), 250u);
    EXPECT_EQ(p.shard(), 1u);
  }
  Get(*c, 1);
  Get(*c, 1);
  CacheCounters n = c->counters();
  EXPECT_EQ(n.shards_fetched, 1u);
  EXPECT_EQ(n.bytes_fetched, 250u);
  EXPECT_EQ(n.cache_hits, 2u);
  EXPECT_EQ(n.shards_evicted, 0u);
  EXPECT_EQ(c->bytes_used(), 250u);
  EXPECT_EQ(CountFetches(log(), 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s1"}));
}

TEST_F(ShardCacheTest, NestedNamesGetTheirFolders) {
  CacheOptions o;
  o.root = root();
  auto c = ShardCache::Open(o, {{"train/part/shard.00000.mds", 64}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto pin = (*c)->Acquire(0, LoggingFetch(0, 64, log()));
  ASSERT_TRUE(pin.ok()) << pin.status().ToString();
  EXPECT_EQ(pin->path(), root() + "/train/part/shard.00000.mds");
  EXPECT_EQ(cache_test::Slurp(pin->path()), ShardBytes(0, 64));
}

TEST_F(ShardCacheTest, ScratchAndCompanionFilesCountUnderTheLimit) {
  // Shard 0: 100 bytes fetched with a 60-byte scratch file that becomes its
  // companion (a compressed download kept); shard 1: 100 bytes with a 70-byte
  // scratch file deleted after the fetch.
  std::vector<ShardSpec> specs = {{"s0", 100, 60, "s0.zip", 60}, {"s1", 100, 70, "", 0}};
  CacheOptions o;
  o.root = root();
  o.cache_limit = 169;
  o.wait_timeout = 1s;
  auto small = ShardCache::Open(o, specs);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("shard 1 's1' (170 bytes with its scratch"),
            std::string::npos)
      << small.status().message();
  o.cache_limit = 230;
  auto c = ShardCache::Open(o, specs);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ShardCache& cache = **c;
  uint64_t used_during = 0;
  auto fetch = [&](size_t i, bool keep) {
    return [&, i, keep](const std::string& tmp) {
      cache_test::WriteWhole(ScratchPath(tmp), std::string(specs[i].fetch_extra, 'z'));
      cache_test::WriteWhole(tmp, ShardBytes(i, 100));
      used_during = cache.bytes_used();
      if (keep && std::rename(ScratchPath(tmp).c_str(), (root() + "/s0.zip").c_str()) != 0) {
        return IoError("rename");
      }
      return Status::Ok();
    };
  };
  {
    auto pin = cache.Acquire(0, fetch(0, true));
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    EXPECT_EQ(used_during, 160u);
    EXPECT_EQ(cache.bytes_used(), 160u);  // the shard and its kept companion
  }
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s0.zip"}));
  {
    // 160 + 170 > 230: shard 0 and its companion go first.
    auto pin = cache.Acquire(1, fetch(1, false));
    ASSERT_TRUE(pin.ok()) << pin.status().ToString();
    EXPECT_EQ(used_during, 170u);
    EXPECT_EQ(cache.bytes_used(), 100u);  // the scratch file is gone
  }
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s1"}));
  EXPECT_EQ(cache.counters().shards_evicted, 1u);
  // A failed fetch (room made by evicting shard 1) leaves neither scratch
  // nor companion, and no reservation.
  auto failed = cache.Acquire(0, [&](const std::string& tmp) {
    cache_test::WriteWhole(ScratchPath(tmp), "zz");
    cache_test::WriteWhole(root() + "/s0.zip", "zz");
    used_during = cache.bytes_used();
    return CorruptError("bad download");
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(used_during, 160u);
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{});
  EXPECT_EQ(cache.bytes_used(), 0u);
  EXPECT_EQ(cache.counters().shards_evicted, 2u);
}

TEST_F(ShardCacheTest, LimitSmallerThanLargestShardIsAnError) {
  CacheOptions o;
  o.root = root();
  o.cache_limit = 299;
  auto c = ShardCache::Open(o, MakeSpecs({100, 300, 200, 300}));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().ToString(),
            "invalid argument: shard cache '" + root() +
                "': cache_limit 299 bytes is smaller than the largest shard's fetch, shard 1 "
                "'s1' (300 bytes with its scratch or companion file)");
  o.cache_limit = 300;
  EXPECT_TRUE(ShardCache::Open(o, MakeSpecs({100, 300, 200, 300})).ok());
}

TEST_F(ShardCacheTest, BadNamesAreRejected) {
  auto err = [&](std::vector<ShardSpec> specs) { return OpenError(root(), std::move(specs)); };
  const std::string p = "invalid argument: shard cache '" + root() + "': ";
  EXPECT_EQ(err({{"a", 1}, {"../b", 1}}), p + "shard 1 name '../b' has a '.' or '..' path component");
  EXPECT_EQ(err({{"/etc/passwd", 1}}),
            p + "shard 0 name '/etc/passwd' is absolute; shard names are relative to the cache folder");
  EXPECT_EQ(err({{"a//b", 1}}), p + "shard 0 name 'a//b' has an empty path component");
  EXPECT_EQ(err({{"", 1}}), p + "shard 0 name '' is empty");
  EXPECT_EQ(err({{".sluice/state", 1}}),
            p + "shard 0 name '.sluice/state' is inside the cache's state folder");
  EXPECT_EQ(err({{"a", 1}, {"a", 2}}), p + "shard 1 name 'a' is used by an earlier shard too");
}

TEST_F(ShardCacheTest, EvictsLeastRecentlyUsed) {
  auto c = Open({100, 100, 100, 100}, 300);
  Get(*c, 0);
  Get(*c, 1);
  Get(*c, 2);
  Get(*c, 0);  // 1 is now the coldest
  Get(*c, 3);
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 2, 3}));
  EXPECT_EQ(c->bytes_used(), 300u);
  EXPECT_EQ(c->counters().shards_evicted, 1u);
  Get(*c, 1);  // by last use 2, 0, 3: evicts 2
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(c->counters().shards_evicted, 2u);
  EXPECT_EQ(CountFetches(log(), 4), (std::vector<int>{1, 2, 1, 1}));
}

TEST_F(ShardCacheTest, PinnedShardIsNeverEvicted) {
  auto c = Open({100, 100, 100}, 200);
  ShardPin held = Get(*c, 0);  // coldest, but pinned
  Get(*c, 1);
  Get(*c, 2);
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(cache_test::Slurp(held.path()), ShardBytes(0, 100));
  held.Release();
  Get(*c, 1);  // now 0 is free and coldest
  EXPECT_EQ(Present(*c), (std::vector<size_t>{1, 2}));
}

TEST_F(ShardCacheTest, NoRoomWhileEverythingIsPinnedTimesOut) {
  auto c = Open({100, 100, 100}, 200, true, 150ms);
  ShardPin a = Get(*c, 0);
  ShardPin b = Get(*c, 1);
  auto start = std::chrono::steady_clock::now();
  auto r = c->Acquire(2, LoggingFetch(2, 100, log()));
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "deadline exceeded: shard cache '" + root() +
                "': wait_timeout of 150 ms expired waiting for room for shard 2 's2' (100 bytes) "
                "under cache_limit 200 bytes: 200 bytes in use; pinned or being fetched: "
                "shard 0 's0' (100 bytes), shard 1 's1' (100 bytes)");
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 2s);
  EXPECT_GE(c->counters().wait_time, 100ms);
  EXPECT_EQ(c->bytes_used(), 200u);
  EXPECT_EQ(CountFetches(log(), 3), (std::vector<int>{1, 1, 0}));
  // Room appears as soon as a pin goes away.
  b.Release();
  Get(*c, 2);
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 2}));
}

// TryAcquire never waits for room: with everything pinned it answers "not
// now" at once, takes no room and leaves nothing; once a pin goes it evicts
// and fetches like Acquire.
TEST_F(ShardCacheTest, TryAcquireWithoutRoomReturnsNotNowAtOnceAndTakesNothing) {
  auto c = Open({100, 100, 100}, 200, true, 5s);
  ShardPin a = Get(*c, 0);
  ShardPin b = Get(*c, 1);
  auto start = std::chrono::steady_clock::now();
  auto r = c->TryAcquire(2, LoggingFetch(2, 100, log()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(c->bytes_used(), 200u);
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(CountFetches(log(), 3), (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(c->counters().shards_fetched, 2u);
  // A present shard is a hit whatever the room.
  auto hit = c->TryAcquire(0, LoggingFetch(0, 100, log()));
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->shard(), 0u);
  hit->reset();
  b.Release();
  auto fetched = c->TryAcquire(2, LoggingFetch(2, 100, log()));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_TRUE(fetched->has_value());
  EXPECT_EQ(*ReadFile((*fetched)->path()), ShardBytes(2, 100));
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(c->bytes_used(), 200u);
  EXPECT_EQ(CountFetches(log(), 3), (std::vector<int>{1, 1, 1}));
}

// Nor does it evict for nothing: with 0 unpinned but 1 and 2 pinned,
// evicting 0 would not make room for 3, so 0 stays. Once 1 is unpinned,
// evicting 0 and 1 makes room, and both go.
TEST_F(ShardCacheTest, TryAcquireThatFindsNoRoomEvictsNothing) {
  auto c = Open({100, 100, 100, 200}, 300, true, 5s);
  Get(*c, 0);
  ShardPin b = Get(*c, 1);
  ShardPin d = Get(*c, 2);
  auto r = c->TryAcquire(3, LoggingFetch(3, 200, log()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_EQ(c->bytes_used(), 300u);
  EXPECT_EQ(c->counters().shards_evicted, 0u);
  b.Release();
  auto fetched = c->TryAcquire(3, LoggingFetch(3, 200, log()));
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString();
  ASSERT_TRUE(fetched->has_value());
  EXPECT_EQ(*ReadFile((*fetched)->path()), ShardBytes(3, 200));
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s2", "s3"}));
  EXPECT_EQ(c->bytes_used(), 300u);
  EXPECT_EQ(c->counters().shards_evicted, 2u);
  EXPECT_EQ(CountFetches(log(), 4), (std::vector<int>{1, 1, 1, 1}));
}

// The same for a waiting Acquire: while pins keep the room short, what it
// could evict stays, also when the wait expires.
TEST_F(ShardCacheTest, AcquireWaitingForRoomEvictsNothingUntilItFits) {
  auto c = Open({100, 100, 100, 200}, 300, true, 150ms);
  Get(*c, 0);
  ShardPin b = Get(*c, 1);
  ShardPin d = Get(*c, 2);
  auto r = c->Acquire(3, LoggingFetch(3, 200, log()));
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_EQ(c->bytes_used(), 300u);
  EXPECT_EQ(c->counters().shards_evicted, 0u);
  b.Release();
  Get(*c, 3);
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s2", "s3"}));
  EXPECT_EQ(c->counters().shards_evicted, 2u);
}

// A fetch of the same shard that has reserved its room (here another
// thread's: its own lock, as another process's) needs nothing the caller
// holds: TryAcquire waits for it and pins what it fetched.
TEST_F(ShardCacheTest, TryAcquireWaitsForAnotherFetchThatHasItsRoom) {
  auto c = Open({100}, 0, true, 5s);
  HeldFetch fetcher(*c);
  auto tried = std::async(std::launch::async, [&] {
    return c->TryAcquire(0, LoggingFetch(0, 100, log()));
  });
  EXPECT_EQ(tried.wait_for(100ms), std::future_status::timeout);  // it waits
  fetcher.Finish();
  auto r = tried.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(*ReadFile((*r)->path()), ShardBytes(0, 100));
  EXPECT_EQ(CountFetches(log(), 1), (std::vector<int>{0}));
  EXPECT_EQ(c->counters().shards_fetched, 1u);
  EXPECT_EQ(c->counters().cache_hits, 1u);
  EXPECT_EQ(c->bytes_used(), 100u);
}

// A fetch of the same shard that is still waiting for room (maybe room the
// caller's pins hold) is not waited for: "not now" at once, and nothing is
// evicted or fetched for it. Once a pin goes, that fetch gets its room.
TEST_F(ShardCacheTest, TryAcquireDoesNotWaitForAnotherFetchWaitingForRoom) {
  auto c = Open({100, 100, 100}, 200, true, 5s);
  ShardPin a = Get(*c, 0);
  ShardPin b = Get(*c, 1);
  std::thread fetcher([&] {
    auto pin = c->Acquire(2, LoggingFetch(2, 100, log()));
    EXPECT_TRUE(pin.ok()) << pin.status().ToString();
  });
  // The fetcher holds shard 2's download once its temporary is recorded.
  auto temp_pid = [&] {
    uint32_t pid = 0;
    int fd = ::open(StateFile().c_str(), O_RDONLY);
    if (fd < 0) return pid;
    (void)::pread(fd, &pid, sizeof(pid),
                  sizeof(cache_layout::CacheStateHeader) +
                      2 * sizeof(cache_layout::CacheShardRecord) +
                      offsetof(cache_layout::CacheShardRecord, temp_pid));
    ::close(fd);
    return pid;
  };
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (temp_pid() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(temp_pid(), static_cast<uint32_t>(::getpid()));
  auto start = std::chrono::steady_clock::now();
  auto r = c->TryAcquire(2, LoggingFetch(2, 100, log()));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s1"}));
  EXPECT_EQ(CountFetches(log(), 3), (std::vector<int>{1, 1, 0}));
  b.Release();
  fetcher.join();
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s2"}));
  EXPECT_EQ(CountFetches(log(), 3), (std::vector<int>{1, 1, 1}));
}

// The fetch a TryAcquire waits for may lose its room while it waits (it
// failed, and a third fetch took the download and waits for room, maybe
// room the caller's pins hold): TryAcquire re-checks as it waits and
// answers "not now". The state that third fetch leaves (the download held,
// no room reserved) is made here by clearing the shard's reservation in the
// state file while the first fetch still holds the download.
TEST_F(ShardCacheTest, TryAcquireStopsWaitingForAFetchThatLostItsRoom) {
  auto c = Open({100}, 0, true, 5s);
  auto set_accounted = [&](uint64_t bytes) {
    int fd = ::open(StateFile().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::pwrite(fd, &bytes, sizeof(bytes),
                       sizeof(cache_layout::CacheStateHeader) +
                           offsetof(cache_layout::CacheShardRecord, accounted)),
              static_cast<ssize_t>(sizeof(bytes)));
    ::close(fd);
  };
  HeldFetch fetcher(*c);
  auto tried = std::async(std::launch::async, [&] {
    return c->TryAcquire(0, LoggingFetch(0, 100, log()));
  });
  EXPECT_EQ(tried.wait_for(100ms), std::future_status::timeout);  // its room is reserved: it waits
  set_accounted(0);
  const bool answered = tried.wait_for(2s) == std::future_status::ready;
  set_accounted(100);  // as the fetch left it, so that it ends as usual
  fetcher.Finish();
  EXPECT_TRUE(answered) << "TryAcquire kept waiting for the download";
  auto r = tried.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(CountFetches(log(), 1), (std::vector<int>{0}));
  EXPECT_EQ(c->counters().shards_fetched, 1u);
  EXPECT_EQ(c->counters().cache_hits, 0u);
  EXPECT_EQ(c->bytes_used(), 100u);
}

TEST_F(ShardCacheTest, WaitingForAnotherFetchTimesOut) {
  auto c = Open({100}, 0, true, 120ms);
  HeldFetch fetcher(*c);
  auto r = c->Acquire(0, LoggingFetch(0, 100, log()));
  fetcher.Finish();
  EXPECT_EQ(r.status().ToString(),
            "deadline exceeded: shard cache '" + root() +
                "': wait_timeout of 120 ms expired waiting for shard 0 's0' to be fetched by "
                "process " + std::to_string(::getpid()));
  Get(*c, 0);
  EXPECT_EQ(c->counters().shards_fetched, 1u);
  EXPECT_EQ(CountFetches(log(), 1), (std::vector<int>{0}));
}

TEST_F(ShardCacheTest, VanishedOrWrongSizeShardIsFetchedAgain) {
  auto c = Open({100, 100});
  Get(*c, 0);
  ASSERT_EQ(::unlink((root() + "/s0").c_str()), 0);
  EXPECT_FALSE(c->IsPresent(0));
  Get(*c, 0);
  ASSERT_EQ(::truncate((root() + "/s0").c_str(), 40), 0);
  EXPECT_FALSE(c->IsPresent(0));
  Get(*c, 0);
  EXPECT_EQ(c->counters().shards_fetched, 3u);
  EXPECT_EQ(c->bytes_used(), 100u);  // counted once throughout
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0"}));
}

TEST_F(ShardCacheTest, FailedFetchLeavesNothing) {
  auto c = Open({100, 100}, 200);
  auto r = c->Acquire(0, [](const std::string& tmp) {
    cache_test::WriteWhole(tmp, "partial");
    return HashMismatchError("xxh64 of s0 is 1234, expected 5678");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "hash mismatch: shard cache '" + root() +
                                       "': fetching shard 0 's0': xxh64 of s0 is 1234, "
                                       "expected 5678");
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{});
  EXPECT_EQ(c->bytes_used(), 0u);

  r = c->Acquire(1, [](const std::string& tmp) {
    cache_test::WriteWhole(tmp, std::string(99, 'x'));
    return Status::Ok();
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  const std::string expect_prefix = "shard cache '" + root() + "': fetching shard 1 's1': wrote 99 bytes to " + root() + "/.s1.sluice-tmp." + std::to_string(::getpid()) + ".";
  EXPECT_EQ(r.status().message().substr(0, expect_prefix.size()), expect_prefix);
  EXPECT_EQ(r.status().message().substr(r.status().message().size() - 14), ", expected 100");
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{});
  EXPECT_EQ(c->bytes_used(), 0u);

  Get(*c, 0);
  Get(*c, 1);
  EXPECT_EQ(c->bytes_used(), 200u);
}

TEST_F(ShardCacheTest, EvictableFalseNeverDeletes) {
  MakeDirs(root()).ToString();
  for (size_t i = 0; i < 3; ++i) {
    cache_test::WriteWhole(root() + "/s" + std::to_string(i), ShardBytes(i, 100));
  }
  auto c = Open({100, 100, 100, 100}, 200, /*evictable=*/false);
  EXPECT_EQ(c->bytes_used(), 300u);  // what is on disk, over the limit
  for (size_t i = 0; i < 3; ++i) Get(*c, i);
  auto r = c->Acquire(3, LoggingFetch(3, 100, log()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "invalid argument: shard cache '" + root() +
                "': no room for shard 3 's3' (100 bytes) under cache_limit 200 bytes: 300 bytes "
                "in use and eviction is disabled (no remote: local shards are never deleted)");
  EXPECT_EQ(c->Evict(0).ToString(),
            "invalid argument: shard cache '" + root() +
                "': cannot evict shard 0 's0': eviction is disabled (no remote: local shards are "
                "never deleted)");
  EXPECT_EQ(Present(*c), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(c->counters().cache_hits, 3u);
  EXPECT_EQ(c->counters().shards_evicted, 0u);
}

TEST_F(ShardCacheTest, EvictRefusesPinnedShards) {
  auto c = Open({100, 100});
  ShardPin p = Get(*c, 0);
  EXPECT_EQ(c->Evict(0).ToString(), "invalid argument: shard cache '" + root() +
                                        "': cannot evict shard 0 's0': a process pins it");
  ShardPin moved = std::move(p);
  EXPECT_FALSE(p.valid());
  EXPECT_FALSE(c->Evict(0).ok());
  moved = ShardPin();  // releases
  EXPECT_TRUE(c->Evict(0).ok());
  EXPECT_TRUE(c->Evict(1).ok());  // absent: nothing to do
  EXPECT_EQ(Present(*c), std::vector<size_t>{});
  EXPECT_EQ(c->bytes_used(), 0u);
  EXPECT_EQ(c->counters().shards_evicted, 1u);
}

TEST_F(ShardCacheTest, OutOfRangeShard) {
  auto c = Open({100});
  auto r = c->Acquire(1, LoggingFetch(1, 100, log()));
  EXPECT_EQ(r.status().ToString(),
            "out of range: shard cache '" + root() + "': shard 1 out of range (1 shards)");
}

TEST_F(ShardCacheTest, ReopenReusesShardsAndRebuildsLostState) {
  {
    auto c = Open({100, 200, 300});
    Get(*c, 0);
    Get(*c, 2);
  }
  {
    auto c = Open({100, 200, 300});
    EXPECT_EQ(c->bytes_used(), 400u);
    Get(*c, 0);
    Get(*c, 2);
    EXPECT_EQ(c->counters().cache_hits, 2u);
    EXPECT_EQ(c->counters().shards_fetched, 0u);
  }
  // A lost state file is rebuilt from the files, stale temps removed.
  ASSERT_EQ(::unlink(StateFile().c_str()), 0);
  cache_test::WriteWhole(root() + "/" + TempPathFor("s1", cache_test::GoneOwner(), 7), "half");
  cache_test::WriteWhole(root() + "/s1.tmp.x", "not ours");
  auto c = Open({100, 200, 300});
  EXPECT_EQ(c->bytes_used(), 400u);
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"s0", "s1.tmp.x", "s2"}));
}

TEST_F(ShardCacheTest, DifferentShardListWhileInUseIsAnError) {
  auto a = Open({100, 200});
  CacheOptions o;
  o.root = root();
  auto b = ShardCache::Open(o, MakeSpecs({100, 201}));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().ToString(),
            "invalid argument: shard cache '" + root() +
                "': the folder is in use by another process with a different shard list "
                "(2 shards here)");
  Get(*a, 0);
  a.reset();
  auto c = Open({100, 201});  // nobody uses it now: state rebuilt
  EXPECT_EQ(c->bytes_used(), 100u);
}

// Partitions: two shard lists over one folder, open at the same time, each
// counting and evicting only its own files (a Parquet stream's column sets).
TEST_F(ShardCacheTest, PartitionsKeepDifferentShardListsApartAtOnce) {
  auto a = Open({100, 200}, /*limit=*/300);
  CacheOptions o;
  o.root = root();
  o.cache_limit = 300;
  o.partition = "c1";
  std::vector<ShardSpec> specs = MakeSpecs({150, 150, 150});
  for (ShardSpec& s : specs) s.name = "p." + s.name;
  auto b = ShardCache::Open(o, specs);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  Get(*a, 0);
  Get(*a, 1);
  Get(**b, 0);
  Get(**b, 1);
  Get(**b, 2);  // evicts b's shard 0, never a's files
  EXPECT_EQ(a->bytes_used(), 300u);
  EXPECT_EQ((*b)->bytes_used(), 300u);
  EXPECT_EQ(Present(**b), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{"p.s1", "p.s2", "s0", "s1"}));
  auto dir = CacheStateDir(root());
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(FileExists(*dir + "/state.c1"));
  EXPECT_TRUE(FileExists(*dir + "/lock.c1"));
  // The same partition with another list is still refused while in use.
  specs[0].bytes = 151;
  auto c = ShardCache::Open(o, specs);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().ToString().find("in use by another process with a different shard list"),
            std::string::npos)
      << c.status().ToString();
  o.partition = "../x";
  auto bad = ShardCache::Open(o, specs);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "invalid argument: shard cache '" + root() +
                "': the cache partition \"../x\" is not a name of up to 64 letters, digits, "
                "'_' or '-'");
}

// The state file's tag is base/binary_file.h's, its bytes as before that
// owned it: "SLUICEC1", then layout 2 (little-endian). A state file of
// another layout is made again, with this one's tag, not used.
TEST_F(ShardCacheTest, TheStateFileStartsWithItsMagicAndLayoutAndAnotherLayoutIsMadeAgain) {
  auto head = [&] {
    std::string bytes(12, '\0');
    int fd = ::open(StateFile().c_str(), O_RDWR);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::pread(fd, bytes.data(), bytes.size(), 0), 12);
    ::close(fd);
    return bytes;
  };
  const std::string tag("SLUICEC1\x02\0\0\0", 12);
  {
    auto c = Open({100, 200});
    Get(*c, 0);
    EXPECT_EQ(head(), tag);
    EXPECT_EQ(c->bytes_used(), 100u);
  }
  int fd = ::open(StateFile().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "\x01", 1, 8), 1);  // layout 1
  uint64_t used = 99999;
  ASSERT_EQ(::pwrite(fd, &used, 8, offsetof(cache_layout::CacheStateHeader, bytes_used)), 8);
  ::close(fd);
  auto c = Open({100, 200});
  EXPECT_EQ(head(), tag);
  EXPECT_EQ(c->bytes_used(), 100u);  // counted from the shard files
}

TEST_F(ShardCacheTest, InterruptedUpdateIsRepairedFromDisk) {
  auto c = Open({100, 200});
  Get(*c, 0);
  // Simulate a process killed inside the global lock: dirty set, bytes wrong.
  int fd = ::open(StateFile().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  cache_layout::CacheStateHeader h;
  ASSERT_EQ(::pread(fd, &h, sizeof(h), 0), static_cast<ssize_t>(sizeof(h)));
  h.dirty = 1;
  h.bytes_used = 99999;
  ASSERT_EQ(::pwrite(fd, &h, sizeof(h), 0), static_cast<ssize_t>(sizeof(h)));
  ::close(fd);
  EXPECT_EQ(c->bytes_used(), 99999u);
  EXPECT_TRUE(c->Evict(1).ok());  // any global-lock holder repairs first
  EXPECT_EQ(c->bytes_used(), 100u);
}

TEST_F(ShardCacheTest, AlreadyAccountedShardStillFitsUnderTheLimit) {
  auto c = Open({100, 100, 100}, 200);
  Get(*c, 0);
  Get(*c, 1);
  // As after a rebuild that saw a live fetcher of shard 2: counted, over the limit.
  int fd = ::open(StateFile().c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const uint64_t used = 300, accounted = 100;
  ASSERT_EQ(::pwrite(fd, &used, 8, offsetof(cache_layout::CacheStateHeader, bytes_used)), 8);
  ASSERT_EQ(::pwrite(fd, &accounted, 8,
                     sizeof(cache_layout::CacheStateHeader) +
                         2 * sizeof(cache_layout::CacheShardRecord) +
                         offsetof(cache_layout::CacheShardRecord, accounted)),
            8);
  ::close(fd);
  Get(*c, 2);
  EXPECT_EQ(Present(*c), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(c->bytes_used(), 200u);
}

TEST_F(ShardCacheTest, ThreadsOfOneProcessFetchEachShardOnce) {
  auto c = Open({1000, 2000, 3000, 4000, 5000});
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        size_t i = static_cast<size_t>(t + round) % 5;
        auto pin = c->Acquire(i, LoggingFetch(i, c->spec(i).bytes, log(), 2ms));
        if (!pin.ok() || cache_test::Slurp(pin->path()) != ShardBytes(i, c->spec(i).bytes)) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(CountFetches(log(), 5), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(c->counters().shards_fetched, 5u);
  EXPECT_EQ(c->counters().cache_hits, 35u);
}

TEST_F(ShardCacheTest, UseAfterForkIsRejected) {
  auto c = Open({100});
  ShardPin p = Get(*c, 0);
  const std::string expected = "invalid argument: shard cache '" + root() +
                               "': opened in process " + std::to_string(::getpid()) +
                               " and used in process ";
  pid_t child = cache_test::Spawn([&] {
    auto r = c->Acquire(0, LoggingFetch(0, 100, log()));
    if (r.ok()) return 1;
    const std::string& got = r.status().ToString();
    if (got.compare(0, expected.size(), expected) != 0) return 2;
    if (got.find(std::to_string(::getpid()) + " after fork; open a new ShardCache in each "
                 "process") == std::string::npos) return 3;
    p.Release();  // must not drop the parent's pin
    return 0;
  });
  EXPECT_EQ(cache_test::WaitChild(child), 0);
  EXPECT_EQ(c->Evict(0).code(), StatusCode::kInvalidArgument);  // still pinned
}

// A link inside the cache folder is never followed: a shard beneath a linked
// folder is an error naming the link, and nothing lands where it points.
TEST_F(ShardCacheTest, SymlinkedFolderIsRefusedAndNothingIsWrittenOutside) {
  const std::string outside = dir_.path() + "/outside";
  ASSERT_TRUE(MakeDirs(outside).ok());
  ASSERT_TRUE(MakeDirs(root()).ok());
  ASSERT_EQ(::symlink(outside.c_str(), (root() + "/sub").c_str()), 0);
  CacheOptions o;
  o.root = root();
  auto c = ShardCache::Open(o, {{"sub/shard.mds", 64}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE((*c)->IsPresent(0));
  auto pin = (*c)->Acquire(0, LoggingFetch(0, 64, log()));
  ASSERT_FALSE(pin.ok());
  EXPECT_EQ(pin.status().ToString(),
            "invalid argument: shard cache '" + root() + "': fetching shard 0 'sub/shard.mds': " +
                root() + "/sub is a symbolic link: nothing beneath " + root() +
                " is reached through one");
  EXPECT_EQ(ListFiles(outside), std::vector<std::string>{});
  EXPECT_EQ(CountFetches(log(), 1), std::vector<int>{0});  // refused before fetching
  EXPECT_EQ((*c)->bytes_used(), 0u);
  // A shard file of the right size there is not served either.
  cache_test::WriteWhole(outside + "/shard.mds", ShardBytes(0, 64));
  EXPECT_FALSE((*c)->IsPresent(0));
  EXPECT_FALSE((*c)->Acquire(0, LoggingFetch(0, 64, log())).ok());
  EXPECT_EQ((*c)->counters().cache_hits, 0u);
  EXPECT_EQ((*c)->Evict(0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cache_test::Slurp(outside + "/shard.mds"), ShardBytes(0, 64));
}

// A shard name that is a link (to a file of the right size) is not a hit: the
// link is replaced by a fetched file, and its target is left alone.
TEST_F(ShardCacheTest, SymlinkedShardFileIsReplacedNotFollowed) {
  const std::string outside = dir_.path() + "/outside.bin";
  cache_test::WriteWhole(outside, std::string(100, 'o'));
  ASSERT_TRUE(MakeDirs(root()).ok());
  ASSERT_EQ(::symlink(outside.c_str(), (root() + "/s0").c_str()), 0);
  auto c = Open({100});
  EXPECT_FALSE(c->IsPresent(0));
  Get(*c, 0);
  EXPECT_EQ(c->counters().cache_hits, 0u);
  EXPECT_EQ(c->counters().shards_fetched, 1u);
  struct stat st;
  ASSERT_EQ(::lstat((root() + "/s0").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(cache_test::Slurp(outside), std::string(100, 'o'));
}

// A pinned file is opened through the cache folder without following links:
// a link swapped in after the check that found the shard present (the race
// a writer of the cache folder could try) is refused, not read. A folder
// read in place follows its user's links.
TEST_F(ShardCacheTest, PinnedFileIsOpenedWithoutFollowingALinkSwappedIn) {
  const std::string outside = dir_.path() + "/outside.bin";
  cache_test::WriteWhole(outside, std::string(100, 'o'));
  auto c = Open({100});
  ShardPin pin = Get(*c, 0);
  ASSERT_TRUE(pin.valid());
  auto fd = pin.Open();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  auto map = MappedFile::Map(fd->get(), pin.path());
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->data(), ShardBytes(0, 100));
  ASSERT_EQ(::unlink((root() + "/s0").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (root() + "/s0").c_str()), 0);
  auto swapped = pin.Open();
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.status().message().find(root() + "/s0"), std::string::npos)
      << swapped.status().ToString();
  EXPECT_NE(swapped.status().message().find("link"), std::string::npos)
      << swapped.status().ToString();
  pin.Release();
  c.reset();

  ScratchDir in_place;
  const std::string folder = in_place.path() + "/ds";
  ASSERT_TRUE(MakeDirs(folder).ok());
  cache_test::WriteWhole(dir_.path() + "/real.bin", ShardBytes(0, 100));
  ASSERT_EQ(::symlink((dir_.path() + "/real.bin").c_str(), (folder + "/s0").c_str()), 0);
  CacheOptions o;
  o.root = folder;
  o.evictable = false;
  o.wait_timeout = 5s;
  auto local = ShardCache::Open(o, MakeSpecs({100}));
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  auto local_pin = (*local)->Acquire(0, LoggingFetch(0, 100, log()));
  ASSERT_TRUE(local_pin.ok()) << local_pin.status().ToString();
  auto local_fd = local_pin->Open();
  ASSERT_TRUE(local_fd.ok()) << local_fd.status().ToString();
  EXPECT_EQ(MappedFile::Map(local_fd->get(), local_pin->path())->data(), ShardBytes(0, 100));
}

// Open deletes the temporaries of processes that are gone, in every shard
// folder, whoever wrote them; live owners' temporaries and other files stay.
TEST_F(ShardCacheTest, OpenSweepsTemporariesOfGoneProcesses) {
  ASSERT_NE(ThisProcessTempOwner().start, 0u) << "needs /proc to tell processes apart";
  ASSERT_TRUE(MakeDirs(root() + "/part").ok());
  const std::string gone_shard = TempPathFor("part/s0", cache_test::GoneOwner(), 3);
  const std::string gone_other = TempPathFor("index.json", cache_test::GoneOwner(), 4);
  const std::string gone_scratch = ScratchPath(TempPathFor("part/s0", cache_test::GoneOwner(), 5));
  const std::string live = TempPathFor("part/s1", ThisProcessTempOwner(), 6);
  for (const std::string& f : {gone_shard, gone_other, gone_scratch, live}) {
    cache_test::WriteWhole(root() + "/" + f, "partial");
  }
  cache_test::WriteWhole(root() + "/part/s0.tmp.12.1", "not a temporary of ours");
  CacheOptions o;
  o.root = root();
  auto c = ShardCache::Open(o, {{"part/s0", 10}, {"part/s1", 10}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(ListFiles(root()), (std::vector<std::string>{live, "part/s0.tmp.12.1"}));
}

}  // namespace
}  // namespace sluice

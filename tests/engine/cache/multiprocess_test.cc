// The shard cache across real processes: forked children share one cache
// folder; some are SIGKILLed mid-fetch or mid-read. Children open their own
// ShardCache after fork and report through their exit code (details on
// stderr); the parent checks the folder and a fetch log that every fetch
// appends to.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/shard_cache.h"
#include "engine/cache/state_dir.h"
#include "tests/engine/cache/cache_test_util.h"

namespace sluice {
namespace {

using cache_test::CountFetches;
using cache_test::ListFiles;
using cache_test::LoggingFetch;
using cache_test::MakeSpecs;
using cache_test::ScratchDir;
using cache_test::ShardBytes;
using cache_test::Spawn;
using cache_test::WaitChild;
using namespace std::chrono_literals;

// A one-shot signal between processes: children block in Wait() until the
// parent calls Open(); or a child calls Notify() and the parent Wait()s.
class Gate {
 public:
  Gate() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) std::abort();
  }
  ~Gate() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  // Parent: lets every waiting child through (EOF on the pipe).
  void Open() { CloseWrite(); }
  void Notify() { (void)!::write(fds_[1], "x", 1); }
  // True when a byte or EOF arrived within `timeout`. A child that waits
  // must CloseWrite() first so the parent's Open() reaches it as EOF.
  bool Wait(std::chrono::milliseconds timeout = 20s) {
    struct pollfd p = {fds_[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
    char c;
    return ::read(fds_[0], &c, 1) >= 0;
  }
  void CloseWrite() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2];
};

class MultiProcessTest : public ::testing::Test {
 protected:
  std::string root() const { return dir_.path() + "/cache"; }
  std::string log() const { return dir_.path() + "/fetch.log"; }

  Result<std::unique_ptr<ShardCache>> OpenCache(uint64_t limit = 0,
                                                std::chrono::milliseconds timeout = 10s) {
    CacheOptions o;
    o.root = root();
    o.cache_limit = limit;
    o.wait_timeout = timeout;
    return ShardCache::Open(o, MakeSpecs(sizes_));
  }

  // Child side: acquires `shard`, checks every byte, holds the pin `hold`,
  // checks the file is still there. Returns 0 or prints why and returns 1.
  int AcquireAndCheck(ShardCache& c, size_t shard,
                      std::chrono::microseconds hold = {},
                      std::chrono::microseconds fetch_delay = {}) {
    const uint64_t bytes = sizes_[shard];
    auto pin = c.Acquire(shard, LoggingFetch(shard, bytes, log(), fetch_delay));
    if (!pin.ok()) {
      std::fprintf(stderr, "pid %d: %s\n", ::getpid(), pin.status().ToString().c_str());
      return 1;
    }
    auto data = ReadFile(pin->path());
    if (!data.ok() || *data != ShardBytes(shard, bytes)) {
      std::fprintf(stderr, "pid %d: shard %zu read %zu bytes, wrong content\n", ::getpid(),
                   shard, data.ok() ? data->size() : 0);
      return 1;
    }
    if (hold.count() > 0) std::this_thread::sleep_for(hold);
    if (!c.IsPresent(shard)) {
      std::fprintf(stderr, "pid %d: pinned shard %zu was evicted\n", ::getpid(), shard);
      return 1;
    }
    return 0;
  }

  // Child: `threads` threads each acquire `rounds` shards in a pseudo-random
  // order seeded by (seed, thread).
  int Worker(uint64_t limit, int threads, int rounds, uint64_t seed,
             std::chrono::microseconds hold, std::chrono::microseconds fetch_delay) {
    auto c = OpenCache(limit);
    if (!c.ok()) {
      std::fprintf(stderr, "pid %d: %s\n", ::getpid(), c.status().ToString().c_str());
      return 1;
    }
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        uint64_t x = seed * 1000003 + static_cast<uint64_t>(t) * 7919 + 1;
        for (int r = 0; r < rounds; ++r) {
          x = x * 6364136223846793005ull + 1442695040888963407ull;
          size_t shard = static_cast<size_t>((x >> 33) % sizes_.size());
          if (AcquireAndCheck(**c, shard, hold, fetch_delay) != 0) ++failures;
        }
      });
    }
    for (auto& t : pool) t.join();
    return failures.load() == 0 ? 0 : 1;
  }

  // Parent: samples the folder's bytes while holding the cache's global
  // lock (no eviction or reservation can happen meanwhile) until stopped.
  class Sampler {
   public:
    explicit Sampler(std::string root) : root_(std::move(root)) {
      thread_ = std::thread([this] { Run(); });
    }
    ~Sampler() { Stop(); }
    void Stop() {
      stop_ = true;
      if (thread_.joinable()) thread_.join();
    }
    // Forking while the sampler holds the lock would hand its lock to the
    // child: fork only under this.
    std::unique_lock<std::mutex> Hold() { return std::unique_lock<std::mutex>(mu_); }
    uint64_t max_bytes() const { return max_; }
    int samples() const { return samples_; }

   private:
    void Run() {
      while (!stop_) {
        std::unique_lock<std::mutex> hold(mu_);
        auto state_dir = CacheStateDir(root_);  // fails until the cache folder exists
        const std::string lock =
            state_dir.ok() ? *state_dir + "/" + cache_layout::kLockFile : root_ + "/<none yet>";
        int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {  // not created yet
          hold.unlock();
          std::this_thread::sleep_for(1ms);
          continue;
        }
        struct flock fl = {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = cache_layout::kGlobalByte;
        fl.l_len = 1;
        if (::fcntl(fd, F_OFD_SETLKW, &fl) == 0) {
          max_ = std::max(max_, cache_test::FolderBytes(root_));
          ++samples_;
        }
        ::close(fd);
        hold.unlock();
        std::this_thread::sleep_for(500us);
      }
    }
    std::string root_;
    std::mutex mu_;
    std::atomic<bool> stop_{false};
    uint64_t max_ = 0;
    int samples_ = 0;
    std::thread thread_;
  };

  ScratchDir dir_;
  std::vector<uint64_t> sizes_;
};

TEST_F(MultiProcessTest, EightProcessesFetchEachShardExactlyOnce) {
  for (size_t i = 0; i < 16; ++i) sizes_.push_back(4096 + 1031 * i);
  Gate start;
  std::vector<pid_t> kids;
  for (int p = 0; p < 8; ++p) {
    kids.push_back(Spawn([&, p] {
      start.CloseWrite();
      if (!start.Wait()) return 2;
      return Worker(0, 4, 24, static_cast<uint64_t>(p), {}, 1ms);
    }));
  }
  start.Open();
  for (pid_t k : kids) EXPECT_EQ(WaitChild(k), 0);
  EXPECT_EQ(CountFetches(log(), 16), std::vector<int>(16, 1));
  auto c = OpenCache();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  uint64_t total = 0;
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(cache_test::Slurp((*c)->path(i)), ShardBytes(i, sizes_[i])) << i;
    total += sizes_[i];
  }
  EXPECT_EQ((*c)->bytes_used(), total);
  EXPECT_EQ(ListFiles(root()).size(), 16u);  // no temp file left
}

TEST_F(MultiProcessTest, CacheLimitHoldsAtAllTimesUnderContention) {
  for (size_t i = 0; i < 40; ++i) sizes_.push_back(2048 + 97 * i);
  const uint64_t limit = 12 * 4096;
  Gate start;
  std::vector<pid_t> kids;
  for (int p = 0; p < 8; ++p) {
    kids.push_back(Spawn([&, p] {
      start.CloseWrite();
      if (!start.Wait()) return 2;
      return Worker(limit, 2, 30, static_cast<uint64_t>(p) + 100, 200us, 200us);
    }));
  }
  Sampler sampler(root());
  start.Open();
  for (pid_t k : kids) EXPECT_EQ(WaitChild(k), 0);
  sampler.Stop();
  EXPECT_GT(sampler.samples(), 5);
  EXPECT_LE(sampler.max_bytes(), limit);
  EXPECT_GT(sampler.max_bytes(), limit / 2);  // the run really filled the cache
  std::vector<int> fetches = CountFetches(log(), sizes_.size());
  int total_fetches = 0;
  for (int f : fetches) total_fetches += f;
  EXPECT_GT(total_fetches, 40);  // shards were evicted and fetched again
  auto c = OpenCache(limit);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_LE((*c)->bytes_used(), limit);
  EXPECT_EQ((*c)->bytes_used(), cache_test::FolderBytes(root()));
  for (const std::string& name : ListFiles(root())) {
    size_t i = std::stoul(name.substr(1));  // "s<i>": no temp file left
    EXPECT_EQ(cache_test::Slurp(root() + "/" + name), ShardBytes(i, sizes_[i])) << name;
  }
}

// The fetch of a killed child: writes half the shard, tells the parent,
// then blocks until killed.
ShardCache::FetchFn HalfFetchThenHang(size_t shard, uint64_t bytes, std::string log,
                                      Gate& ready) {
  return [=, &ready](const std::string& tmp) -> Status {
    (void)LoggingFetch(shard, 0, log)(tmp + ".ignored");  // log the attempt only
    ::unlink((tmp + ".ignored").c_str());
    cache_test::WriteWhole(tmp, ShardBytes(shard, bytes).substr(0, bytes / 2));
    ready.Notify();
    for (;;) ::pause();
  };
}

TEST_F(MultiProcessTest, ProcessKilledMidFetchIsReplacedAndLeavesNoPartialFile) {
  sizes_ = {8192, 100};
  Gate ready;
  pid_t a = Spawn([&] {
    auto c = OpenCache();
    if (!c.ok()) return 1;
    auto pin = (*c)->Acquire(0, HalfFetchThenHang(0, 8192, log(), ready));
    return 3;  // unreachable: the fetch never returns
  });
  ASSERT_TRUE(ready.Wait());
  // One temporary, named by base/file.h's scheme, owned by the child.
  const std::vector<std::string> files = ListFiles(root());
  ASSERT_EQ(files.size(), 1u);
  const std::string temp = files[0];
  EXPECT_EQ(temp.rfind(".s0.sluice-tmp." + std::to_string(a) + ".", 0), 0u) << temp;
  ASSERT_TRUE(ParseTempName(temp).has_value()) << temp;
  EXPECT_EQ(ParseTempName(temp)->owner.pid, static_cast<uint32_t>(a));

  std::vector<pid_t> others;
  for (int p = 0; p < 3; ++p) {
    others.push_back(Spawn([&] {
      auto c = OpenCache();
      return c.ok() ? AcquireAndCheck(**c, 0) : 1;
    }));
  }
  std::this_thread::sleep_for(100ms);
  // The others wait; nothing appears under the final name.
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{temp});
  ::kill(a, SIGKILL);
  EXPECT_EQ(WaitChild(a), -SIGKILL);
  for (pid_t k : others) EXPECT_EQ(WaitChild(k), 0);

  EXPECT_EQ(CountFetches(log(), 2), (std::vector<int>{2, 0}));  // the killed one + one more
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{"s0"});
  // A new cache over the folder reuses the complete shard.
  auto c = OpenCache();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->bytes_used(), 8192u);
  EXPECT_EQ(AcquireAndCheck(**c, 0), 0);
  EXPECT_EQ((*c)->counters().cache_hits, 1u);
  EXPECT_EQ((*c)->counters().shards_fetched, 0u);
}

TEST_F(MultiProcessTest, KilledFetchersReservationAndTempAreReclaimed) {
  sizes_ = {1000, 1000};
  Gate ready;
  pid_t a = Spawn([&] {
    auto c = OpenCache(1000);
    if (!c.ok()) return 1;
    auto pin = (*c)->Acquire(0, HalfFetchThenHang(0, 1000, log(), ready));
    return 3;
  });
  ASSERT_TRUE(ready.Wait());
  ::kill(a, SIGKILL);
  EXPECT_EQ(WaitChild(a), -SIGKILL);
  // The dead fetcher's temporary and reservation outlive it...
  const std::vector<std::string> left = ListFiles(root());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rfind(".s0.sluice-tmp." + std::to_string(a) + ".", 0), 0u) << left[0];
  // ...until the next Open reclaims both.
  auto c = OpenCache(1000);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->bytes_used(), 0u);
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{});
  EXPECT_EQ(AcquireAndCheck(**c, 1), 0);
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{"s1"});
  EXPECT_EQ((*c)->bytes_used(), 1000u);
  EXPECT_EQ((*c)->counters().shards_evicted, 0u);  // nothing present was deleted
}

TEST_F(MultiProcessTest, PinOfAKilledProcessDisappears) {
  sizes_ = {1000, 1000};
  Gate ready;
  pid_t a = Spawn([&] {
    auto c = OpenCache(1000);
    if (!c.ok()) return 1;
    auto pin = (*c)->Acquire(0, LoggingFetch(0, 1000, log()));
    if (!pin.ok()) return 2;
    ready.Notify();
    for (;;) ::pause();
  });
  ASSERT_TRUE(ready.Wait());
  auto c = OpenCache(1000, 100ms);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Evict(0).ToString(), "invalid argument: shard cache '" + root() +
                                           "': cannot evict shard 0 's0': a process pins it");
  auto r = (*c)->Acquire(1, LoggingFetch(1, 1000, log()));
  EXPECT_EQ(r.status().ToString(),
            "deadline exceeded: shard cache '" + root() +
                "': wait_timeout of 100 ms expired waiting for room for shard 1 's1' (1000 "
                "bytes) under cache_limit 1000 bytes: 1000 bytes in use; pinned or being "
                "fetched: shard 0 's0' (1000 bytes)");
  ::kill(a, SIGKILL);
  EXPECT_EQ(WaitChild(a), -SIGKILL);
  EXPECT_EQ(AcquireAndCheck(**c, 1), 0);
  EXPECT_FALSE((*c)->IsPresent(0));
  EXPECT_EQ((*c)->counters().shards_evicted, 1u);
  EXPECT_EQ(ListFiles(root()), std::vector<std::string>{"s1"});
}

TEST_F(MultiProcessTest, ForkedChildDoesNotKeepADeadParentsPins) {
  sizes_ = {1000};
  Gate ready;
  const std::string pid_file = dir_.path() + "/grandchild.pid";
  pid_t a = Spawn([&] {
    auto c = OpenCache();
    if (!c.ok()) return 1;
    auto pin = (*c)->Acquire(0, LoggingFetch(0, 1000, log()));
    if (!pin.ok()) return 2;
    pid_t g = ::fork();  // e.g. a DataLoader worker, forked while pinning
    if (g == 0) {
      // fork() has returned here, so the atfork handlers have run.
      ::alarm(20);  // never outlives a broken test for long
      cache_test::WriteWhole(pid_file, std::to_string(::getpid()));
      ready.Notify();
      for (;;) ::pause();
    }
    for (;;) ::pause();
  });
  ASSERT_TRUE(ready.Wait());
  pid_t g = static_cast<pid_t>(std::stol(cache_test::Slurp(pid_file)));
  auto c = OpenCache();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE((*c)->Evict(0).ok());  // a pins it
  ::kill(a, SIGKILL);
  EXPECT_EQ(WaitChild(a), -SIGKILL);
  EXPECT_EQ(::kill(g, 0), 0);  // the grandchild lives on...
  EXPECT_TRUE((*c)->Evict(0).ok()) << "...but holds no pin";
  ::kill(g, SIGKILL);
}

TEST_F(MultiProcessTest, RandomKillsNeverLeavePartialShardsOrWedgePeers) {
  for (size_t i = 0; i < 24; ++i) sizes_.push_back(3000 + 211 * i);
  const uint64_t limit = 8 * 8192;
  Sampler sampler(root());
  uint64_t seed = 7;
  for (int round = 0; round < 6; ++round) {
    std::vector<pid_t> kids;
    for (int p = 0; p < 4; ++p) {
      uint64_t s = seed++;
      auto hold = sampler.Hold();
      kids.push_back(Spawn([&, s] { return Worker(limit, 2, 1000, s, 100us, 500us); }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 9 * round));
    for (pid_t k : kids) ::kill(k, SIGKILL);  // at whatever point each one is
    for (pid_t k : kids) EXPECT_EQ(WaitChild(k), -SIGKILL);
    // Whatever carries a final name is whole.
    for (const std::string& name : ListFiles(root())) {
      if (ParseTempName(name)) continue;
      size_t i = std::stoul(name.substr(1));
      EXPECT_EQ(cache_test::Slurp(root() + "/" + name), ShardBytes(i, sizes_[i])) << name;
    }
  }
  // A survivor acquires every shard within the limit, in time.
  auto hold = sampler.Hold();
  pid_t last = Spawn([&] {
    auto c = OpenCache(limit, 5s);
    if (!c.ok()) return 1;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      if (AcquireAndCheck(**c, i) != 0) return 2;
    }
    return 0;
  });
  hold.unlock();
  EXPECT_EQ(WaitChild(last), 0);
  sampler.Stop();
  EXPECT_LE(sampler.max_bytes(), limit);
  auto c = OpenCache(limit);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_LE((*c)->bytes_used(), limit);
  for (size_t i = 0; i < sizes_.size(); ++i) {
    if ((*c)->IsPresent(i)) continue;
    // Shards nobody touched after a kill may keep a dead fetcher's temp
    // until the next fetch of that shard or a reclaim; none under a final name.
    EXPECT_FALSE(FileExists((*c)->path(i)));
  }
}

}  // namespace
}  // namespace sluice

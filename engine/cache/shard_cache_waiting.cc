// Every wait of the cache: one polling loop bounded by a deadline and a
// cancel flag, and the locks taken through it (global, download, pins).

#include "engine/cache/shard_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "engine/cache/shard_cache_internal.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::LockFile;
using cache_internal::TryLockByte;
using cache_internal::UnlockByte;

namespace {

constexpr auto kFirstPoll = std::chrono::microseconds(50);
constexpr auto kMaxPoll = std::chrono::milliseconds(5);

}  // namespace

Status ShardCache::WaitUntil(Clock::time_point deadline, const std::atomic<bool>* cancel,
                             const std::function<Result<bool>()>& attempt,
                             const std::function<std::string(bool timed_out)>& waiting,
                             WaitCause cause) {
  const auto start = Clock::now();
  auto poll = std::chrono::duration_cast<Clock::duration>(kFirstPoll);
  bool waited = false;
  auto count = [&] {
    if (!waited) return;
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
    wait_ns_ += took.count();
    AcquireTimes* times = cache_internal::ThreadAcquireTimes::Current();
    if (cause == WaitCause::kPeerFetch) {
      peer_fetch_wait_ns_ += took.count();
      if (times != nullptr) times->peer_fetch += took;
    } else if (cause == WaitCause::kRoom) {
      room_wait_ns_ += took.count();
      if (times != nullptr) times->room += took;
    }
  };
  for (;;) {
    Result<bool> done = attempt();
    if (!done.ok() || *done) {
      count();
      return done.ok() ? Status::Ok() : done.status();
    }
    waited = true;
    const auto now = Clock::now();
    if (cancel != nullptr && cancel->load()) {
      count();
      return CancelledError(Prefix() + ": cancelled " + waiting(false));
    }
    if (now >= deadline) {
      count();
      return DeadlineExceededError(Prefix() + ": wait_timeout of " + std::to_string(TimeoutMs()) +
                                   " ms expired " + waiting(true));
    }
    std::this_thread::sleep_for(std::min(poll, deadline - now));
    poll = std::min<Clock::duration>(poll * 2, kMaxPoll);
  }
}

Status ShardCache::LockUntil(const LockFile& file, off_t byte, bool exclusive,
                             Clock::time_point deadline,
                             const std::function<std::string()>& waiting_for,
                             const std::atomic<bool>* cancel, WaitCause cause) {
  return WaitUntil(
      deadline, cancel, [&] { return TryLockByte(file, byte, exclusive); },
      [&](bool) { return "waiting for " + waiting_for(); }, cause);
}

Result<ShardCache::GlobalLock> ShardCache::LockGlobal(Clock::time_point deadline) {
  SLUICE_ASSIGN_OR_RETURN(LockFile file, LockFile::Open(options_.env, lock_path_));
  SLUICE_RETURN_IF_ERROR(LockUntil(file, cl::kGlobalByte, true, deadline,
                                   [&] { return "the cache lock " + lock_path_; }));
  GlobalLock lock(std::move(file));
  // A holder killed mid-update leaves dirty set: rebuild from the files.
  if (header_ != nullptr && Load(header_->dirty) != 0) {
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(lock.file()));
  }
  return lock;
}

Status ShardCache::Pin(size_t shard, Clock::time_point deadline) {
  return WaitUntil(
      deadline, nullptr,
      [&]() -> Result<bool> {
        std::lock_guard<std::mutex> lock(pin_mu_);
        auto it = pin_counts_.find(shard);
        if (it != pin_counts_.end()) {
          ++it->second;
          return true;
        }
        // Fails only while an evictor holds the pin byte, which is brief.
        SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(pin_file_, cl::PinByte(shard), false));
        if (got) pin_counts_.emplace(shard, 1);
        return got;
      },
      [&](bool) { return "waiting to pin " + Describe(shard) + " while another process evicts it"; });
}

void ShardCache::Unpin(size_t shard) {
  // In a forked child the description is the parent's: leave its locks alone.
  if (::getpid() != pid_) return;
  std::lock_guard<std::mutex> lock(pin_mu_);
  auto it = pin_counts_.find(shard);
  if (it == pin_counts_.end()) return;
  if (--it->second == 0) {
    pin_counts_.erase(it);
    (void)UnlockByte(pin_file_, cl::PinByte(shard));  // fails only on a bad fd
  }
}

}  // namespace sluice

// Accounting: the bytes each shard counts under cache_limit and their sum
// in the shared state file, kept true across crashes (the dirty bracket and
// rebuilding from the files).

#include "engine/cache/shard_cache.h"

#include <vector>

#include "engine/cache/shard_cache_internal.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::Minus;
using cache_internal::Store;
using cache_internal::TryLockByte;
using cache_internal::UnlockByte;

void ShardCache::SetAccounted(size_t shard, uint64_t bytes, const DirtyScope&) {
  const uint64_t old = Load(records_[shard].accounted);
  Store(records_[shard].accounted, bytes);
  Store(header_->bytes_used, Minus(Load(header_->bytes_used), old) + bytes);
}

Status ShardCache::RecomputeLocked(const cache_internal::LockFile& op, bool alone) {
  SLUICE_ASSIGN_OR_RETURN(const std::vector<int8_t> states, FileStates());
  std::vector<uint64_t> accounted(shards_->size(), 0);
  for (size_t j = 0; j < shards_->size(); ++j) {
    if (states[j] == 1) {
      accounted[j] = KeptBytes(j);
      continue;
    }
    if (alone) continue;
    // A live fetcher holds the download byte: its reservation stands.
    SLUICE_ASSIGN_OR_RETURN(bool free, TryLockByte(op, cl::DownloadByte(j), true));
    if (free) {
      SLUICE_RETURN_IF_ERROR(UnlockByte(op, cl::DownloadByte(j)));
    } else {
      accounted[j] = FetchBytes(j);
    }
  }
  DirtyScope dirty(header_);
  uint64_t total = 0;
  for (size_t j = 0; j < shards_->size(); ++j) {
    Store(records_[j].accounted, accounted[j]);
    total += accounted[j];
  }
  Store(header_->bytes_used, total);
  return Status::Ok();
}

Status ShardCache::ReclaimDeadFetchesLocked(const cache_internal::LockFile& op) {
  for (size_t j = 0; j < shards_->size(); ++j) {
    if (Load(records_[j].temp_pid) == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(bool dead, TryLockByte(op, cl::DownloadByte(j), true));
    if (!dead) continue;  // its fetcher runs
    RemoveStaleTemp(j);
    {
      DirtyScope dirty(header_);
      SetAccounted(j, FileState(j) == 1 ? KeptBytes(j) : 0, dirty);
    }
    SLUICE_RETURN_IF_ERROR(UnlockByte(op, cl::DownloadByte(j)));
  }
  return Status::Ok();
}

void ShardCache::AccountPresent(size_t shard) {
  // A present file nobody accounted (copied in by hand, or its accounting
  // was lost): count it so eviction can see it. Best effort: a hit does not
  // fail because the cache lock is busy.
  auto global = LockGlobal(Clock::now() + options_.wait_timeout);
  if (!global.ok()) return;
  if (Load(records_[shard].accounted) != 0 || FileState(shard) != 1) return;
  DirtyScope dirty(header_);
  SetAccounted(shard, KeptBytes(shard), dirty);
}

Status ShardCache::ReleaseReservation(size_t shard) {
  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  if (Load(records_[shard].accounted) == 0 || FileState(shard) == 1) return Status::Ok();
  DirtyScope dirty(header_);
  SetAccounted(shard, 0, dirty);
  return Status::Ok();
}

void ShardCache::SettleAccounting(size_t shard) {
  // The fetch's reservation becomes what the shard keeps (its scratch file is
  // gone). If the cache lock is busy past wait_timeout the reservation
  // stays: an over-count, never an under-count.
  auto global = LockGlobal(Clock::now() + options_.wait_timeout);
  if (!global.ok()) return;
  const uint64_t kept = KeptBytes(shard);
  if (Load(records_[shard].accounted) == kept) return;
  DirtyScope dirty(header_);
  SetAccounted(shard, kept, dirty);
}

}  // namespace sluice

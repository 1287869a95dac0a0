// Least-recently-used eviction: the LRU stamp, the one eviction routine,
// making room under cache_limit before a fetch, and Evict.

#include "engine/cache/shard_cache.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/cache/shard_cache_internal.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::Minus;
using cache_internal::Store;
using cache_internal::TryLockByte;
using cache_internal::UnlockByte;

void ShardCache::Touch(size_t shard) {
  uint64_t stamp = std::atomic_ref<uint64_t>(header_->access_clock).fetch_add(1) + 1;
  Store(records_[shard].last_access, stamp);
}

Status ShardCache::DeleteUnpinnedLocked(size_t shard) {
  DirtyScope dirty(header_);
  const int state = FileState(shard);
  SLUICE_RETURN_IF_ERROR(DeleteFiles(shard, state));
  if (state == 1) ++shards_evicted_;
  RemoveStaleTemp(shard);  // no fetcher is alive: it would pin the shard
  SetAccounted(shard, 0, dirty);
  return Status::Ok();
}

Result<bool> ShardCache::EvictLocked(const cache_internal::LockFile& op, size_t shard) {
  // A reader or a live fetcher of the shard holds its pin byte shared.
  SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(op, cl::PinByte(shard), true));
  if (!got) return false;
  Status deleted = DeleteUnpinnedLocked(shard);
  SLUICE_RETURN_IF_ERROR(UnlockByte(op, cl::PinByte(shard)));
  if (!deleted.ok()) return deleted;
  return true;
}

Result<bool> ShardCache::MakeRoom(size_t shard, Clock::time_point deadline,
                                  const std::atomic<bool>* cancel, bool wait) {
  const uint64_t limit = options_.cache_limit;
  const uint64_t size = FetchBytes(shard);
  std::vector<size_t> pinned;  // of the last attempt, for the timeout message
  uint64_t used = 0;
  auto attempt = [&]() -> Result<bool> {
    pinned.clear();
    SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(deadline));
    // Partly or wholly accounted already (a reservation left by a dead
    // fetcher, a file that vanished, or a rebuild that saw our download
    // lock): add what is missing; the total must still fit.
    const uint64_t have = Load(records_[shard].accounted);
    const uint64_t need = Minus(size, have);
    used = Load(header_->bytes_used);
    if (limit != 0 && used + need > limit) {
      if (!options_.evictable) {
        if (need == 0) return true;  // nothing may be deleted; we add nothing
        return InvalidArgumentError(
            Prefix() + ": no room for " + Describe(shard) + " (" + std::to_string(size) +
            " bytes) under cache_limit " + std::to_string(limit) + " bytes: " +
            std::to_string(used) + " bytes in use and eviction is disabled (no remote: "
            "local shards are never deleted)");
      }
      std::vector<std::pair<uint64_t, size_t>> lru;
      for (size_t j = 0; j < shards_->size(); ++j) {
        if (j != shard && Load(records_[j].accounted) != 0) {
          lru.emplace_back(Load(records_[j].last_access), j);
        }
      }
      std::sort(lru.begin(), lru.end());
      // Nothing is evicted unless the evictions make room: a shard deleted
      // for a fetch that then waits or gives up would be deleted for
      // nothing. So first the unpinned shards, least recently used first,
      // are kept from being pinned (their pin bytes held) until they would
      // free enough; only then are they deleted.
      std::vector<size_t> held;
      auto release_held = [&]() -> Status {
        Status first = Status::Ok();
        for (size_t j : held) {
          Status st = UnlockByte(global.file(), cl::PinByte(j));
          if (first.ok()) first = st;
        }
        held.clear();
        return first;
      };
      uint64_t freed = 0;
      for (const auto& [stamp, j] : lru) {
        if (Minus(used, freed) + need <= limit) break;
        Result<bool> unpinned = TryLockByte(global.file(), cl::PinByte(j), true);
        if (!unpinned.ok()) {
          (void)release_held();
          return unpinned.status();
        }
        if (!*unpinned) {
          pinned.push_back(j);
          continue;
        }
        held.push_back(j);
        freed += Load(records_[j].accounted);
      }
      if (Minus(used, freed) + need <= limit) {
        for (size_t j : held) {
          // A file that cannot be deleted waits like a pin.
          if (!DeleteUnpinnedLocked(j).ok()) pinned.push_back(j);
        }
      }
      SLUICE_RETURN_IF_ERROR(release_held());
      used = Load(header_->bytes_used);
    }
    if (limit != 0 && used + need > limit) return false;  // releases global while waiting
    if (need != 0) {
      DirtyScope dirty(header_);
      SetAccounted(shard, have + need, dirty);
    }
    return true;
  };
  auto waiting = [&](bool timed_out) {
    if (!timed_out) return "waiting for room for " + Describe(shard) + " under cache_limit";
    std::sort(pinned.begin(), pinned.end());
    std::string list;
    for (size_t k = 0; k < pinned.size() && k < 8; ++k) {
      if (k != 0) list += ", ";
      list += Describe(pinned[k]) + " (" + std::to_string(spec(pinned[k]).bytes) + " bytes)";
    }
    if (pinned.size() > 8) list += " and " + std::to_string(pinned.size() - 8) + " more";
    return "waiting for room for " + Describe(shard) + " (" + std::to_string(size) +
           " bytes) under cache_limit " + std::to_string(limit) + " bytes: " +
           std::to_string(used) + " bytes in use; pinned or being fetched: " + list;
  };
  if (!wait) return attempt();  // one try: room now, or not (the lock is released)
  SLUICE_RETURN_IF_ERROR(WaitUntil(deadline, cancel, attempt, waiting, WaitCause::kRoom));
  return true;
}

Status ShardCache::Evict(size_t shard) {
  SLUICE_RETURN_IF_ERROR(CheckUsable(shard));
  if (!options_.evictable) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": eviction is disabled (no remote: local shards are never "
                                "deleted)");
  }
  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  Result<bool> evicted = EvictLocked(global.file(), shard);
  if (!evicted.ok()) return evicted.status().WithContext(Prefix());
  if (!*evicted) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": a process pins it");
  }
  return Status::Ok();
}

}  // namespace sluice

// What the files implementing ShardCache share (shard_cache*.cc): access to
// the memory-mapped state file, the global lock's holder and the dirty
// bracket around accounting. Not part of the cache's interface.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/ofd_lock.h"
#include "engine/cache/shard_cache.h"

namespace sluice {
namespace cache_internal {

// The state file is shared memory between processes: every access goes
// through atomic_ref so no reader sees a torn value and no store is elided.
template <typename T>
T Load(const T& field) {
  return std::atomic_ref<T>(const_cast<T&>(field)).load();
}
template <typename T>
void Store(T& field, T value) {
  std::atomic_ref<T>(field).store(value);
}

// Accounting repaired from disk can briefly disagree with a record; never wrap.
inline uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// "a/b/c" -> "a/b"; "c" -> "".
inline std::string_view ParentOf(std::string_view name) {
  size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : name.substr(0, slash);
}
// "a/b/c" -> "c"; "c" -> "c".
inline std::string_view BaseOf(std::string_view name) {
  size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

// The one rule of a shard's presence, from what a stat of its name said:
// 1 = a regular file of exactly `bytes`, 0 = missing (it or a folder on its
// way), -1 = anything else (wrong size, a folder or link in its place, a
// link on the way, an unreadable folder).
inline int FileStateOf(const Result<struct stat>& st, uint64_t bytes) {
  if (!st.ok()) return st.status().code() == StatusCode::kNotFound ? 0 : -1;
  return S_ISREG(st->st_mode) && static_cast<uint64_t>(st->st_size) == bytes ? 1 : -1;
}

// Whether the folder-by-folder recount (shard_cache_recount.cc) can number
// `count` shards: its tables hold a shard's number + 1 in 32 bits (half the
// memory of size_t at a million shards). InvalidArgument beyond.
Status CheckRecountShardCount(uint64_t count);

// The AcquireTimes of the Acquire running on this thread (null: none
// asked), for the waits and the fetch deep inside it; set for the call's
// duration by its scope.
class ThreadAcquireTimes {
 public:
  explicit ThreadAcquireTimes(AcquireTimes* times) : saved_(current_) { current_ = times; }
  ~ThreadAcquireTimes() { current_ = saved_; }
  ThreadAcquireTimes(const ThreadAcquireTimes&) = delete;
  ThreadAcquireTimes& operator=(const ThreadAcquireTimes&) = delete;
  static AcquireTimes* Current() { return current_; }

 private:
  AcquireTimes* saved_;
  static inline thread_local AcquireTimes* current_ = nullptr;
};

}  // namespace cache_internal

// Holds the global byte through its own open file description.
class ShardCache::GlobalLock {
 public:
  explicit GlobalLock(cache_internal::LockFile file) : file_(std::move(file)) {}
  const cache_internal::LockFile& file() const { return file_; }

 private:
  cache_internal::LockFile file_;
};

// Sets the state file's dirty flag for its lifetime: a holder of the global
// lock killed inside leaves it set, and the next holder rebuilds the
// accounting from the files (LockGlobal). One at a time, under global.
class ShardCache::DirtyScope {
 public:
  explicit DirtyScope(cache_layout::CacheStateHeader* header) : header_(header) {
    cache_internal::Store(header_->dirty, uint64_t{1});
  }
  ~DirtyScope() { cache_internal::Store(header_->dirty, uint64_t{0}); }
  DirtyScope(const DirtyScope&) = delete;
  DirtyScope& operator=(const DirtyScope&) = delete;

 private:
  cache_layout::CacheStateHeader* header_;
};

}  // namespace sluice

// On-disk layout of a shard cache's coordination state, shared by every
// process that opens the same cache folder (and by tests that observe it).
//
//   <root>/<shard name>              a present shard: exists with its size
//   <root>/<folder>/.<base>.sluice-tmp.<pid>.<start>.<seq>[.scratch]
//                                    a shard being fetched (never served),
//                                    named by base/file.h's TempPathFor
//   <state>/lock                     empty file; only its byte-range OFD
//                                    locks matter (see ofd_lock.h)
//   <state>/state                    memory-mapped CacheStateHeader followed
//                                    by one CacheShardRecord per shard
//   <state>/lock.<p>, <state>/state.<p>
//                                    the same for partition <p>
//                                    (CacheOptions::partition): a shard
//                                    list kept apart from the folder's others
//
// <state> is CacheStateDir(root) (state_dir.h), outside the cache folder.
// <root>/.sluice/ (kStateDir) holds only what a stream of raw or Parquet
// files keeps beside its cache (its listing; the Parquet footers), so no
// shard may be named inside it.
//
// Lock bytes of <state>/lock, always taken in this order when more
// than one is held with blocking waits: pin(i) -> download(i) -> global.
// Other bytes are only ever tried without waiting while holding global.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "base/binary_file.h"

namespace sluice::cache_layout {

inline constexpr const char* kStateDir = ".sluice";
inline constexpr const char* kLockFile = "lock";
inline constexpr const char* kStateFile = "state";

// Exclusive while a process reads or changes accounting (bytes used, the
// per-shard accounted bytes) or deletes a shard.
inline constexpr off_t kGlobalByte = 0;
// Shared by every open ShardCache for its lifetime: a state file may only be
// re-initialised (new shard list) when nobody holds it.
inline constexpr off_t kUsersByte = 1;
inline constexpr off_t kFirstShardByte = 64;

// Exclusive while one process fetches shard i: one download per shard per node.
inline constexpr off_t DownloadByte(size_t shard) {
  return kFirstShardByte + 2 * static_cast<off_t>(shard);
}
// Shared while any process reads shard i; eviction takes it exclusively
// without waiting, so a pinned shard is never deleted.
inline constexpr off_t PinByte(size_t shard) { return DownloadByte(shard) + 1; }

// All fields but the tag are accessed through std::atomic_ref (lock-free
// and address-free for these sizes on Linux), so concurrent readers never
// see torn values. The tag (base/binary_file.h's magic and version, the
// first 12 bytes of every state file Sluice keeps) is written once, when
// the file is made, by a process alone with it under the global lock, and
// checked under that lock: it never changes while others read it.
struct CacheStateHeader {
  BinaryFileTag tag;
  uint32_t record_size;
  uint64_t shard_count;
  uint64_t fingerprint;   // of the shard names and sizes
  uint64_t initialized;   // 1 once the whole file is valid
  uint64_t dirty;         // 1 while global's holder mutates accounting
  uint64_t bytes_used;    // sum of CacheShardRecord::accounted
  uint64_t access_clock;  // source of last_access stamps
  uint64_t reserved[8];
};
static_assert(sizeof(CacheStateHeader) == 128);
static_assert(offsetof(CacheStateHeader, record_size) == 12);

// The state file's tag, checked and written by base/binary_file.h. Layout
// 2: temporaries named by base/file.h's scheme (temp_start recorded).
inline constexpr BinaryFileKind kStateKind{.magic = "SLUICEC1",
                                           .version = 2,
                                           .header_bytes = sizeof(CacheStateHeader),
                                           .noun = "a shard cache's state file"};

struct CacheShardRecord {
  // access_clock value at the last hit or fetch (LRU order; 0 = never).
  uint64_t last_access;
  // Bytes counted in bytes_used for this shard: its size while the file is
  // present or being fetched (a reservation), else 0. Changed under global.
  uint64_t accounted;
  // Temp file of the current or last download: its TempOwner (pid, start)
  // and sequence (pid 0 = none). Written only by the download lock's holder,
  // so when a new holder finds a record, its writer is dead and the file is
  // stale.
  uint32_t temp_pid;
  uint32_t temp_seq;
  uint64_t temp_start;
};
static_assert(sizeof(CacheShardRecord) == 32);

}  // namespace sluice::cache_layout

// The node-wide shard cache: one cache folder shared by every rank and
// data-loader worker process on a machine.
//
// A shard is numbered 0..N-1 and has a relative file name and an expected
// size. It is present iff <root>/<name> exists with exactly that size: the
// file system is the truth. Coordination lives in the folder's state folder
// (CacheStateDir in state_dir.h: outside the cache folder, keyed by its
// identity; see cache_layout.h) and nowhere else, so several jobs or test
// workers on one machine never collide unless they share a folder, and the
// folder holds only shards. Locks are Linux OFD
// byte-range locks, released by the kernel when a process dies, so a process
// killed at any moment leaves no stale lock, no half file under a final name
// and no wedged peer:
//   - exactly one process fetches a shard at a time (the others wait for it);
//   - a fetch writes one temporary named by base/file.h's scheme
//     (.<name>.sluice-tmp.<pid>.<start>.<seq>, recorded in the state file)
//     and renames it when the fetch function (which also verifies hashes)
//     succeeded and the size matches; a dead fetcher's temporary is deleted
//     by the next fetcher of the shard, by eviction, and by the next Open,
//     which also deletes every other temporary in the shard folders whose
//     owner process is gone;
//   - nothing beneath the root is reached through a symbolic link (see
//     ConfinedDir in base/file.h): a link on the way to a shard is an error
//     naming it, and no file is written, renamed or deleted outside the root.
//     The root itself may be a link. Without a remote (evictable false) the
//     folder is the user's own dataset, read in place: links are followed
//     for reading there, never for writing;
//   - bytes of present and in-flight shards never exceed cache_limit: room is
//     made before a fetch starts by evicting the least recently used shards
//     that no process pins. A shard being fetched counts its size plus its
//     fetch_extra (and companion) bytes, a present one its size plus its
//     companion when that exists, so the files in the folder (temp and
//     scratch files included) stay under the limit;
//   - every wait is bounded by wait_timeout and ends in a clear error.
//
// The cache knows nothing about formats, stores or the planner.
//
// Fork safety: Open creates nothing at static-init time and starts no thread.
// A ShardCache (and its pins) belongs to the process that opened it: after
// fork(), the child must open its own; every call from another process
// returns kInvalidArgument, and pins released in a child leave the parent's
// locks alone. A child never inherits the parent's locks (see fork_guard.h):
// when the parent dies, its pins and fetches are gone whatever its children
// do.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/file.h"
#include "base/mapped_file.h"
#include "base/status.h"
#include "engine/cache/cache_layout.h"
#include "engine/cache/ofd_lock.h"

namespace sluice {

struct ShardSpec {
  std::string name;  // relative to the cache root: no "..", not absolute
  uint64_t bytes = 0;
  // Bytes a fetch may write to its scratch file (ScratchPath) beside the temp
  // file, e.g. a compressed download: reserved under cache_limit with the
  // shard while it is fetched.
  uint64_t fetch_extra = 0;
  // A file the fetch may leave beside the shard (e.g. the compressed file
  // keep_zip keeps), "" = none; same name rules as `name`. Counted under
  // cache_limit while it and the shard are present; deleted with the shard.
  std::string companion{};
  uint64_t companion_bytes = 0;
};

// A shard of a cache by view: ShardSpec's fields.
struct ShardSpecView {
  std::string_view name;
  uint64_t bytes = 0;
  uint64_t fetch_extra = 0;
  std::string_view companion;
  uint64_t companion_bytes = 0;
};

// The shards a cache holds, by number: an interface, so that a dataset of a
// million shards keeps their names where its index has them (one copy per
// process, or none: a mapped index) instead of a ShardSpec per shard. The
// cache keeps the list for its lifetime; the views at() returns must stay
// valid as long as the list does. Immutable; safe from any thread.
class ShardSpecList {
 public:
  virtual ~ShardSpecList() = default;
  virtual size_t size() const = 0;
  virtual ShardSpecView at(size_t i) const = 0;
};

// A list of ShardSpec values it owns.
std::shared_ptr<const ShardSpecList> ShardSpecsOf(std::vector<ShardSpec> specs);

// A fetch writing `tmp_path` may use one scratch file, base/file.h's
// ScratchPath(tmp_path). After a successful fetch of a shard with a
// companion, a scratch file left behind becomes that companion; otherwise the
// cache deletes it after the fetch, or when it cleans up after a dead fetcher.

struct CacheOptions {
  std::string root;  // the cache folder; created if missing
  // Upper bound on the bytes of present plus in-flight shards; 0 = no limit.
  uint64_t cache_limit = 0;
  // False when there is no remote: the cache then never deletes a shard
  // (data that exists only locally), and a full cache is an error.
  bool evictable = true;
  // Bound on the waits of one call (one deadline for all of them; this
  // process's own fetch does not count): another process's fetch of the same
  // shard, room under cache_limit while other shards are pinned, the cache
  // lock. Expiry returns kDeadlineExceeded naming what was waited for.
  std::chrono::milliseconds wait_timeout{std::chrono::seconds(120)};
  // Every call on the cache folder's files goes through it (the fetch
  // function writes its temporary with its own); it must outlive the cache.
  Env* env = Env::Default();
  // "" = the folder's one shard list. Else a name ([A-Za-z0-9_-], at most
  // 64 bytes) for a shard list kept apart from the folder's others: its
  // lock and state files are "lock.<partition>" and "state.<partition>", so
  // caches of different lists coordinate (and count cache_limit) each on
  // their own, at the same time. The caller must give lists of different
  // partitions disjoint file names, or one could evict the other's files.
  std::string partition;
};

// What this ShardCache object (this process) did.
struct CacheCounters {
  uint64_t shards_fetched = 0;
  uint64_t bytes_fetched = 0;
  uint64_t shards_evicted = 0;
  uint64_t cache_hits = 0;  // Acquire found the shard present (maybe after waiting)
  std::chrono::nanoseconds wait_time{0};  // spent waiting on other holders (all below and more)
  std::chrono::nanoseconds peer_fetch_wait{0};  // for another process's fetch of a shard
  std::chrono::nanoseconds room_wait{0};        // for room under cache_limit
};

// Where one Acquire's time went, for a caller that wants to know why it
// took long (AcquireImpl's `times`). Waits for the cache lock and pins are
// brief and not split out.
struct AcquireTimes {
  std::chrono::nanoseconds peer_fetch{0};  // waiting for another process's fetch of the shard
  std::chrono::nanoseconds room{0};        // waiting for room under cache_limit
  std::chrono::nanoseconds fetch{0};       // this process's fetch function, rename included
};

class ShardCache;

// A pin on a present shard: while it lives, no process evicts the shard.
// Move-only. It must not outlive the ShardCache that made it. A pin is not
// itself thread-safe, but pins of one cache may live in different threads.
class ShardPin {
 public:
  ShardPin() = default;
  ShardPin(ShardPin&& other) noexcept;
  ShardPin& operator=(ShardPin&& other) noexcept;
  ShardPin(const ShardPin&) = delete;
  ShardPin& operator=(const ShardPin&) = delete;
  ~ShardPin() { Release(); }

  bool valid() const { return cache_ != nullptr; }
  size_t shard() const { return shard_; }
  // Full path of the shard file. path() and bytes() require valid().
  std::string path() const;
  uint64_t bytes() const;
  // Opens the pinned file for reading. In a cache with a remote, through the
  // cache folder without following any link (the same rule as the check
  // that found it present, with no window between the two); in a folder
  // read in place, by its path (links there are the user's). Requires valid().
  Result<OwnedFd> Open() const;
  // Unpins now (idempotent); the destructor does it otherwise.
  void Release();

 private:
  friend class ShardCache;
  ShardPin(ShardCache* cache, size_t shard) : cache_(cache), shard_(shard) {}
  ShardCache* cache_ = nullptr;
  size_t shard_ = 0;
};

// Thread-safe: one ShardCache may be used from any number of threads.
class ShardCache {
 public:
  // Writes the shard into `tmp_path` (creating it; a temporary of this
  // process, so base/file.h's writers write it in place) and verifies it;
  // any error aborts the fetch, the temp file is deleted and the error
  // returned. It may use ScratchPath(tmp_path) (at most fetch_extra bytes)
  // and, when it succeeds, leave the spec's companion file, either by
  // writing it or by leaving the scratch file to become it.
  using FetchFn = std::function<Status(const std::string& tmp_path)>;

  // Opens or creates the cache folder's state, reclaims the temporaries and
  // reservations of fetchers that are gone, and deletes every temporary in
  // the shards' folders whose owner is gone. Errors: a shard name that is
  // empty, absolute, has ".." or empty components, or repeats; a cache_limit
  // smaller than the largest shard's fetch (bytes + fetch_extra, or +
  // companion_bytes); a folder in use by another process with a
  // different shard list; a state folder CacheStateDir refuses.
  static Result<std::unique_ptr<ShardCache>> Open(CacheOptions options,
                                                  std::vector<ShardSpec> shards);
  static Result<std::unique_ptr<ShardCache>> Open(CacheOptions options,
                                                  std::shared_ptr<const ShardSpecList> shards);

  ~ShardCache();
  ShardCache(const ShardCache&) = delete;
  ShardCache& operator=(const ShardCache&) = delete;

  // Pins shard `shard` and makes it present: a hit when it is already
  // present, else waits for another process fetching it, else makes room
  // (evicting unpinned least recently used shards once evicting them makes
  // enough room, or waiting for pins to go until it does) and calls `fetch`
  // in this thread. Returns the pin.
  // Errors: kOutOfRange (bad index), kInvalidArgument (used after fork; full
  // cache with evictable false), kDeadlineExceeded (a wait expired), the
  // fetch's own error with the shard as context, kCorrupt when the fetch
  // wrote a file of the wrong size, kCancelled when `cancel` (optional,
  // polled while waiting for another fetcher or for room; it must outlive
  // the call) became true, kInvalidArgument naming the link when a folder
  // on the way to the shard is a symbolic link. After an error nothing of
  // the shard is left behind and its room is given back.
  // `times` (optional): adds where this call's time went.
  Result<ShardPin> Acquire(size_t shard, const FetchFn& fetch,
                           const std::atomic<bool>* cancel = nullptr,
                           AcquireTimes* times = nullptr);

  // Like Acquire, but never waits for room under cache_limit: nullopt ("not
  // now") instead, with nothing of the shard left behind, its room not
  // taken and no other shard evicted (eviction happens only when it makes
  // room). Another fetch of the shard (another process's, or another
  // ShardCache call's) is waited for, as Acquire does, once that fetch has
  // reserved its room (its download then needs nothing the caller holds);
  // before that it may itself wait for room, and the answer is "not now"
  // too. Other waits (a pin while another process evicts the shard, the
  // cache lock) are brief and bounded as Acquire's; other errors are
  // Acquire's. For callers that hold pins while they call and may not wait
  // for room while holding them (a reader's extra fetches under a limit):
  // one that did could wait for room that only its own pins hold, or the
  // pins of a reader waiting on it.
  Result<std::optional<ShardPin>> TryAcquire(size_t shard, const FetchFn& fetch,
                                             const std::atomic<bool>* cancel = nullptr,
                                             AcquireTimes* times = nullptr);

  // Whether the shard's file exists with its expected size right now.
  bool IsPresent(size_t shard) const;

  // Deletes the shard if no process pins it (kInvalidArgument when pinned or
  // when evictable is false). Deleting an absent shard is OK.
  Status Evict(size_t shard);

  // Bytes of present and in-flight shards of the whole node, as accounted.
  uint64_t bytes_used() const;
  CacheCounters counters() const;

  size_t shard_count() const { return shards_->size(); }
  ShardSpecView spec(size_t shard) const { return shards_->at(shard); }
  std::string path(size_t shard) const { return JoinPath(options_.root, spec(shard).name); }
  // See ShardPin::Open.
  Result<OwnedFd> OpenPresent(size_t shard) const;
  const CacheOptions& options() const { return options_; }

 private:
  friend class ShardPin;
  using Clock = std::chrono::steady_clock;
  class GlobalLock;

  // The members below are implemented by topic: shard_cache.cc (naming,
  // the acquire path), shard_cache_open.cc (Init), shard_cache_waiting.cc
  // (WaitUntil and the locks), shard_cache_accounting.cc,
  // shard_cache_eviction.cc (Touch, MakeRoom, EvictLocked),
  // shard_cache_files.cc (a shard's files and temporaries) and
  // shard_cache_recount.cc (FileStates).
  ShardCache(CacheOptions options, std::shared_ptr<const ShardSpecList> shards);
  Status Init();
  Status CheckUsable(size_t shard) const;
  std::string Describe(size_t shard) const;  // "shard 3 'a/b.mds'"
  std::string Prefix() const;                // "shard cache '<root>'"

  Status Pin(size_t shard, Clock::time_point deadline);
  void Unpin(size_t shard);
  // The one way the cache waits: calls `attempt` until it returns true,
  // sleeping 50 us doubling to 5 ms between calls (never past `deadline`),
  // and adds the time to the wait counter. Ends with attempt's error;
  // kCancelled "<prefix>: cancelled <waiting(false)>" when `cancel` (may be
  // null) became true; kDeadlineExceeded "<prefix>: wait_timeout of N ms
  // expired <waiting(true)>" at the deadline.
  // `cause` says which wait counter (and AcquireTimes field) the time goes
  // to besides the total.
  enum class WaitCause { kOther, kPeerFetch, kRoom };
  Status WaitUntil(Clock::time_point deadline, const std::atomic<bool>* cancel,
                   const std::function<Result<bool>()>& attempt,
                   const std::function<std::string(bool timed_out)>& waiting,
                   WaitCause cause = WaitCause::kOther);
  // Waits for a lock on `byte` through `file`; the messages end "waiting for
  // <waiting_for>".
  Status LockUntil(const cache_internal::LockFile& file, off_t byte, bool exclusive, Clock::time_point deadline,
                   const std::function<std::string()>& waiting_for,
                   const std::atomic<bool>* cancel = nullptr,
                   WaitCause cause = WaitCause::kOther);
  Result<GlobalLock> LockGlobal(Clock::time_point deadline);

  // Accounting. Every change happens while holding the global lock, inside
  // one DirtyScope (shard_cache_internal.h) that a killed holder leaves set.
  class DirtyScope;
  // Sets the shard's accounted bytes, keeping bytes_used their sum.
  void SetAccounted(size_t shard, uint64_t bytes, const DirtyScope& proof);
  // `alone`: no other process uses the folder (Init found the users byte
  // free under the cache lock), so no fetch can be live and no shard's
  // download byte is probed (3 fcntl calls a missing shard: 300,000 at the
  // first open of a 100k-shard stream, issue 38).
  Status RecomputeLocked(const cache_internal::LockFile& op, bool alone = false);
  // Fetchers that died (their download byte is free but their record is
  // set): deletes their temporaries and gives back their reservations.
  Status ReclaimDeadFetchesLocked(const cache_internal::LockFile& op);
  // Deletes the temporaries of dead processes in every folder of a shard
  // or companion.
  void SweepDeadTemps() const;
  // Reserves the shard's fetch under cache_limit, evicting unpinned least
  // recently used shards, and only when they make room (no shard is
  // evicted by an attempt that then finds no room); waits for pins to go
  // (true once reserved), or with `wait` false tries once (false: no room
  // now, nothing reserved, nothing evicted).
  Result<bool> MakeRoom(size_t shard, Clock::time_point deadline, const std::atomic<bool>* cancel,
                        bool wait);
  // The one eviction: deletes shard's files and its accounting unless a
  // process pins it (false). Caller holds global through `op_fd`.
  Result<bool> EvictLocked(const cache_internal::LockFile& op, size_t shard);
  // EvictLocked's deletion, for a caller that holds global and the shard's
  // pin byte exclusively (so no process pins it).
  Status DeleteUnpinnedLocked(size_t shard);
  Status ReleaseReservation(size_t shard);
  // After a fetch: the shard accounts its kept bytes instead of its fetch's.
  void SettleAccounting(size_t shard);
  void AccountPresent(size_t shard);

  // Acquire and TryAcquire (`wait` false: nullopt instead of waiting for
  // room or for another process's fetch).
  // `times` (may be null) is where this thread's waits and fetch add
  // while the call runs (the calls below do not pass it on: one Acquire
  // runs on one thread).
  Result<std::optional<ShardPin>> AcquireImpl(size_t shard, const FetchFn& fetch,
                                              const std::atomic<bool>* cancel, bool wait,
                                              AcquireTimes* times);
  // Holding the shard's download byte: fetches it into a fresh temporary and
  // renames it into place (true); false when `wait` is false and there is
  // no room now; on error or no room leaves nothing and gives the room back.
  Result<bool> FetchLocked(size_t shard, int state, const FetchFn& fetch,
                           Clock::time_point deadline, const std::atomic<bool>* cancel, bool wait);
  // Runs `fetch` into `tmp` (relative to the root) and renames it onto the
  // shard's name when it is a file of the expected size.
  Status FetchInto(size_t shard, const std::string& tmp, const FetchFn& fetch);
  void RemoveStaleTemp(size_t shard);
  void Touch(size_t shard);
  // 1 = present, 0 = absent, -1 = a file of the wrong size or kind, or a
  // symbolic link on the way (for an evictable cache).
  int FileState(size_t shard) const;
  // FileState of every shard, read folder by folder (shard_cache_recount.cc):
  // one listing of each folder holding shards, a stat (relative to that
  // folder) only of the names listed, no path walked per shard.
  // InvalidArgument for more shards than CheckRecountShardCount allows.
  Result<std::vector<int8_t>> FileStates() const;
  // Bytes a present shard takes (with its companion when that exists), and
  // the bytes reserved while it is fetched.
  uint64_t KeptBytes(size_t shard) const;
  uint64_t FetchBytes(size_t shard) const;
  // Deletes the shard's file (unless `state` says absent) and companion.
  Status DeleteFiles(size_t shard, int state);
  // The temporary of `owner`'s fetch `seq` of the shard, relative to the root.
  std::string TempName(size_t shard, const TempOwner& owner, uint32_t seq) const;
  int64_t TimeoutMs() const { return options_.wait_timeout.count(); }

  // What Open's one pass over the shard list found.
  struct ListFacts {
    uint64_t fingerprint = 0;  // of the names and sizes: the state file's
    bool ascending = false;    // names strictly ascending, bytewise
    // The folders of every name and companion, "" (the root) first, each
    // once: views into the list.
    std::vector<std::string_view> folders;
  };

  CacheOptions options_;
  std::shared_ptr<const ShardSpecList> shards_;
  ListFacts facts_;
  ConfinedDir root_dir_;  // every shard file is reached through it
  std::string lock_path_;
  std::string state_path_;
  pid_t pid_ = 0;

  // Holds the users byte and every pin of this process (one open file
  // description; pins are reference-counted per shard under pin_mu_).
  cache_internal::LockFile pin_file_;
  std::mutex pin_mu_;
  std::unordered_map<size_t, uint32_t> pin_counts_;

  // The shared state file, mapped MAP_SHARED for the object's lifetime.
  SharedMap state_map_;
  cache_layout::CacheStateHeader* header_ = nullptr;
  cache_layout::CacheShardRecord* records_ = nullptr;

  std::atomic<uint64_t> shards_fetched_{0};
  std::atomic<uint64_t> bytes_fetched_{0};
  std::atomic<uint64_t> shards_evicted_{0};
  std::atomic<uint64_t> cache_hits_{0};
  std::atomic<int64_t> wait_ns_{0};
  std::atomic<int64_t> peer_fetch_wait_ns_{0};
  std::atomic<int64_t> room_wait_ns_{0};
};

}  // namespace sluice

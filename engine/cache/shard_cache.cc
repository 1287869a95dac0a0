// ShardCache: pins, queries and the acquire path (hit, wait for another
// process's fetch, or fetch here). Opening lives in shard_cache_open.cc,
// the shard files on disk in shard_cache_files.cc, accounting in
// shard_cache_accounting.cc, room and eviction in shard_cache_eviction.cc,
// and every wait in shard_cache_waiting.cc.

#include "engine/cache/shard_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>

#include "base/file.h"
#include "engine/cache/shard_cache_internal.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::Load;
using cache_internal::LockFile;
using cache_internal::ParentOf;
using cache_internal::Store;
using cache_internal::TryLockByte;

// ---------------------------------------------------------------- ShardPin

ShardPin::ShardPin(ShardPin&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)), shard_(other.shard_) {}

ShardPin& ShardPin::operator=(ShardPin&& other) noexcept {
  if (this != &other) {
    Release();
    cache_ = std::exchange(other.cache_, nullptr);
    shard_ = other.shard_;
  }
  return *this;
}

std::string ShardPin::path() const { return cache_->path(shard_); }
uint64_t ShardPin::bytes() const { return cache_->spec(shard_).bytes; }

Result<OwnedFd> ShardPin::Open() const { return cache_->OpenPresent(shard_); }

Result<OwnedFd> ShardCache::OpenPresent(size_t shard) const {
  if (options_.evictable) return root_dir_.OpenFile(spec(shard).name, OpenMode::kRead);
  return options_.env->Open(path(shard), OpenMode::kRead);
}

void ShardPin::Release() {
  if (cache_ != nullptr) cache_->Unpin(shard_);
  cache_ = nullptr;
}

// -------------------------------------------------------------- ShardCache

ShardCache::ShardCache(CacheOptions options, std::shared_ptr<const ShardSpecList> shards)
    : options_(std::move(options)), shards_(std::move(shards)) {}

ShardCache::~ShardCache() {
  // pin_file_ closes last: its description releases the users byte (and, only
  // in the owning process, any pin a caller failed to release).
}

std::string ShardCache::Prefix() const { return "shard cache '" + options_.root + "'"; }

std::string ShardCache::Describe(size_t shard) const {
  return "shard " + std::to_string(shard) + " '" + std::string(spec(shard).name) + "'";
}

Status ShardCache::CheckUsable(size_t shard) const {
  pid_t now = ::getpid();
  if (now != pid_) {
    return InvalidArgumentError(Prefix() + ": opened in process " + std::to_string(pid_) +
                                " and used in process " + std::to_string(now) +
                                " after fork; open a new ShardCache in each process");
  }
  if (shard >= shards_->size()) {
    return OutOfRangeError(Prefix() + ": shard " + std::to_string(shard) + " out of range (" +
                           std::to_string(shards_->size()) + " shards)");
  }
  return Status::Ok();
}

bool ShardCache::IsPresent(size_t shard) const {
  return shard < shards_->size() && FileState(shard) == 1;
}

uint64_t ShardCache::bytes_used() const { return Load(header_->bytes_used); }

CacheCounters ShardCache::counters() const {
  CacheCounters c;
  c.shards_fetched = shards_fetched_.load();
  c.bytes_fetched = bytes_fetched_.load();
  c.shards_evicted = shards_evicted_.load();
  c.cache_hits = cache_hits_.load();
  c.wait_time = std::chrono::nanoseconds(wait_ns_.load());
  c.peer_fetch_wait = std::chrono::nanoseconds(peer_fetch_wait_ns_.load());
  c.room_wait = std::chrono::nanoseconds(room_wait_ns_.load());
  return c;
}

// ------------------------------------------------------------------ fetch

Result<ShardPin> ShardCache::Acquire(size_t shard, const FetchFn& fetch,
                                     const std::atomic<bool>* cancel, AcquireTimes* times) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<ShardPin> pin,
                          AcquireImpl(shard, fetch, cancel, true, times));
  return std::move(*pin);  // a waiting Acquire always ends with a pin or an error
}

Result<std::optional<ShardPin>> ShardCache::TryAcquire(size_t shard, const FetchFn& fetch,
                                                       const std::atomic<bool>* cancel,
                                                       AcquireTimes* times) {
  return AcquireImpl(shard, fetch, cancel, false, times);
}

Result<std::optional<ShardPin>> ShardCache::AcquireImpl(size_t shard, const FetchFn& fetch,
                                                        const std::atomic<bool>* cancel,
                                                        bool wait, AcquireTimes* times) {
  SLUICE_RETURN_IF_ERROR(CheckUsable(shard));
  cache_internal::ThreadAcquireTimes scope(times);
  const auto deadline = Clock::now() + options_.wait_timeout;
  SLUICE_RETURN_IF_ERROR(Pin(shard, deadline));
  ShardPin pin(this, shard);  // unpins on every error path
  auto hit = [&]() -> Result<std::optional<ShardPin>> {
    if (Load(records_[shard].accounted) == 0) AccountPresent(shard);
    Touch(shard);
    ++cache_hits_;
    return std::optional<ShardPin>(std::move(pin));
  };
  if (FileState(shard) == 1) return hit();

  SLUICE_ASSIGN_OR_RETURN(LockFile download, LockFile::Open(options_.env, lock_path_));
  auto fetched_by = [&] {
    uint32_t by = Load(records_[shard].temp_pid);
    return Describe(shard) + " to be fetched by " +
           (by != 0 ? "process " + std::to_string(by) : std::string("another process"));
  };
  if (!wait) {
    // Another fetch of the shard holds its download. While its room is
    // reserved its download needs nothing of ours: wait for it. Without (not
    // yet, or no longer: it may fail, and a third fetch take the download
    // while still waiting for room) it may wait for room our caller's pins
    // hold: not now. Checked at every poll, not once before a wait.
    enum class Then { kFetch, kHit, kNotNow } then = Then::kFetch;
    SLUICE_RETURN_IF_ERROR(WaitUntil(
        deadline, cancel,
        [&]() -> Result<bool> {
          SLUICE_ASSIGN_OR_RETURN(bool got,
                                  TryLockByte(download, cl::DownloadByte(shard), true));
          if (got) return true;
          if (FileState(shard) == 1) {
            then = Then::kHit;
          } else if (Load(records_[shard].accounted) < FetchBytes(shard)) {
            then = Then::kNotNow;
          }
          return then != Then::kFetch;
        },
        [&](bool) { return "waiting for " + fetched_by(); }, WaitCause::kPeerFetch));
    if (then == Then::kHit) return hit();
    if (then == Then::kNotNow) return std::optional<ShardPin>();
  } else {
    SLUICE_RETURN_IF_ERROR(
        LockUntil(download, cl::DownloadByte(shard), true, deadline, fetched_by, cancel,
                  WaitCause::kPeerFetch));
  }
  const int state = FileState(shard);
  if (state == 1) return hit();  // fetched by the process we waited for
  SLUICE_ASSIGN_OR_RETURN(bool fetched, FetchLocked(shard, state, fetch, deadline, cancel, wait));
  if (!fetched) return std::optional<ShardPin>();  // no room now
  Touch(shard);
  ++shards_fetched_;
  bytes_fetched_ += spec(shard).bytes;
  return std::optional<ShardPin>(std::move(pin));
}

Result<bool> ShardCache::FetchLocked(size_t shard, int state, const FetchFn& fetch,
                                     Clock::time_point deadline, const std::atomic<bool>* cancel,
                                     bool wait) {
  const ShardSpecView spec = this->spec(shard);
  // We hold the download byte, so the recorded fetcher is dead.
  RemoveStaleTemp(shard);
  if (state == -1 && options_.evictable) (void)root_dir_.Remove(spec.name);
  // A companion without its shard is left over from a crash: unaccounted.
  if (!spec.companion.empty()) (void)root_dir_.Remove(spec.companion);
  const TempOwner me = ThisProcessTempOwner();
  const uint32_t seq = NextTempSeq();
  cl::CacheShardRecord& r = records_[shard];
  Store(r.temp_pid, me.pid);
  Store(r.temp_seq, seq);
  Store(r.temp_start, me.start);
  auto clear_record = [&] {
    Store(r.temp_pid, uint32_t{0});
    Store(r.temp_seq, uint32_t{0});
    Store(r.temp_start, uint64_t{0});
  };
  Result<bool> room = MakeRoom(shard, deadline, cancel, wait);
  if (!room.ok() || !*room) {
    clear_record();
    return room;
  }
  const std::string tmp = TempName(shard, me, seq);
  Status st = FetchInto(shard, tmp, fetch);
  (void)root_dir_.Remove(ScratchPath(tmp));  // unless it became the companion
  if (!st.ok()) {
    (void)root_dir_.Remove(tmp);
    if (!spec.companion.empty()) (void)root_dir_.Remove(spec.companion);
  }
  clear_record();
  if (!st.ok()) {
    (void)ReleaseReservation(shard);  // if the lock is busy, the next holder repairs it
    return st;
  }
  SettleAccounting(shard);
  return true;
}

Status ShardCache::FetchInto(size_t shard, const std::string& tmp, const FetchFn& fetch) {
  const ShardSpecView spec = this->spec(shard);
  const std::string context = Prefix() + ": fetching " + Describe(shard);
  SLUICE_RETURN_IF_ERROR(root_dir_.OpenFolder(ParentOf(spec.name), true).status().WithContext(context));
  const std::string tmp_path = root_dir_.PathOf(tmp);
  const auto fetch_start = Clock::now();
  Status fetched = fetch(tmp_path);
  if (AcquireTimes* times = cache_internal::ThreadAcquireTimes::Current()) {
    times->fetch += Clock::now() - fetch_start;
  }
  SLUICE_RETURN_IF_ERROR(fetched.WithContext(context));
  auto written = root_dir_.Stat(tmp);
  if (!written.ok()) {
    return IoError(context + ": the fetch left no file at " + tmp_path + " (" +
                   written.status().message() + ")");
  }
  if (!S_ISREG(written->st_mode) || static_cast<uint64_t>(written->st_size) != spec.bytes) {
    return CorruptError(context + ": wrote " + std::to_string(written->st_size) + " bytes to " +
                        tmp_path + ", expected " + std::to_string(spec.bytes) +
                        (S_ISREG(written->st_mode) ? "" : " in a regular file"));
  }
  // A scratch file left behind is the companion the fetch keeps.
  if (!spec.companion.empty() && root_dir_.Stat(ScratchPath(tmp)).ok() &&
      root_dir_.OpenFolder(ParentOf(spec.companion), true).ok()) {
    (void)root_dir_.Rename(ScratchPath(tmp), spec.companion);
  }
  return root_dir_.Rename(tmp, spec.name).WithContext(context);
}

}  // namespace sluice

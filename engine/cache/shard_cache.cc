#include "engine/cache/shard_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_set>
#include <utility>

#include "base/file.h"

namespace sluice {
namespace cl = cache_layout;
using cache_internal::OpenLockFile;
using cache_internal::TryLockByte;
using cache_internal::UniqueFd;
using cache_internal::UnlockByte;

namespace {

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
uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

constexpr auto kFirstPoll = std::chrono::microseconds(50);
constexpr auto kMaxPoll = std::chrono::milliseconds(5);

uint64_t Fingerprint(const std::vector<ShardSpec>& shards) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) { h ^= p[i]; h *= 1099511628211ull; }
  };
  uint64_t count = shards.size();
  mix(&count, sizeof(count));
  for (const ShardSpec& s : shards) {
    uint64_t len = s.name.size();
    mix(&len, sizeof(len));
    mix(s.name.data(), s.name.size());
    mix(&s.bytes, sizeof(s.bytes));
  }
  return h;
}

Status ValidateName(size_t index, const std::string& name) {
  auto bad = [&](const char* why) {
    return InvalidArgumentError("shard " + std::to_string(index) + " name '" + name + "' " + why);
  };
  if (name.empty()) return bad("is empty");
  if (name.front() == '/') return bad("is absolute; shard names are relative to the cache folder");
  size_t start = 0;
  for (;;) {
    size_t end = name.find('/', start);
    std::string_view part(name.data() + start,
                          (end == std::string::npos ? name.size() : end) - start);
    if (part.empty()) return bad("has an empty path component");
    if (part == "." || part == "..") return bad("has a '.' or '..' path component");
    if (start == 0 && part == cl::kStateDir) return bad("is inside the cache's state folder");
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::Ok();
}

// "a/b/c" -> "a/b"; "c" -> "".
std::string ParentOf(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : name.substr(0, slash);
}

}  // namespace

// Holds the global byte through its own open file description.
class ShardCache::GlobalLock {
 public:
  explicit GlobalLock(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
};

// Sets the state file's dirty flag for its lifetime: a holder of the global
// lock killed inside leaves it set, and the next holder rebuilds the
// accounting from the files (LockGlobal). One at a time, under global.
class ShardCache::DirtyScope {
 public:
  explicit DirtyScope(cl::CacheStateHeader* header) : header_(header) {
    Store(header_->dirty, uint64_t{1});
  }
  ~DirtyScope() { Store(header_->dirty, uint64_t{0}); }
  DirtyScope(const DirtyScope&) = delete;
  DirtyScope& operator=(const DirtyScope&) = delete;

 private:
  cl::CacheStateHeader* header_;
};

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

const std::string& ShardPin::path() const { return cache_->path(shard_); }
uint64_t ShardPin::bytes() const { return cache_->spec(shard_).bytes; }

Result<OwnedFd> ShardPin::Open() const { return cache_->OpenPresent(shard_); }

Result<OwnedFd> ShardCache::OpenPresent(size_t shard) const {
  if (options_.evictable) return root_dir_.OpenFile(shards_[shard].name, O_RDONLY);
  OwnedFd fd(::open(paths_[shard].c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("cannot open", paths_[shard], errno);
  return fd;
}

void ShardPin::Release() {
  if (cache_ != nullptr) cache_->Unpin(shard_);
  cache_ = nullptr;
}

// -------------------------------------------------------------- ShardCache

ShardCache::ShardCache(CacheOptions options, std::vector<ShardSpec> shards)
    : options_(std::move(options)), shards_(std::move(shards)) {}

ShardCache::~ShardCache() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  // pin_fd_ closes last: its description releases the users byte (and, only
  // in the owning process, any pin a caller failed to release).
}

Result<std::unique_ptr<ShardCache>> ShardCache::Open(CacheOptions options,
                                                     std::vector<ShardSpec> shards) {
  if (options.root.empty()) return InvalidArgumentError("shard cache: the cache folder is empty");
  if (options.wait_timeout.count() < 0) {
    return InvalidArgumentError("shard cache '" + options.root + "': wait_timeout is negative");
  }
  std::unordered_set<std::string_view> names;
  size_t largest = 0;
  auto fetch_bytes = [&](size_t i) {
    return shards[i].bytes + std::max(shards[i].fetch_extra, shards[i].companion_bytes);
  };
  for (size_t i = 0; i < shards.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(ValidateName(i, shards[i].name)
                               .WithContext("shard cache '" + options.root + "'"));
    if (!shards[i].companion.empty()) {
      SLUICE_RETURN_IF_ERROR(ValidateName(i, shards[i].companion)
                                 .WithContext("shard cache '" + options.root + "': companion"));
    }
    if (!names.insert(shards[i].name).second) {
      return InvalidArgumentError("shard cache '" + options.root + "': shard " +
                                  std::to_string(i) + " name '" + shards[i].name +
                                  "' is used by an earlier shard too");
    }
    if (fetch_bytes(i) > fetch_bytes(largest)) largest = i;
  }
  if (options.cache_limit != 0 && !shards.empty() && options.cache_limit < fetch_bytes(largest)) {
    return InvalidArgumentError(
        "shard cache '" + options.root + "': cache_limit " + std::to_string(options.cache_limit) +
        " bytes is smaller than the largest shard's fetch, shard " + std::to_string(largest) +
        " '" + shards[largest].name + "' (" + std::to_string(fetch_bytes(largest)) +
        " bytes with its scratch or companion file)");
  }
  std::unique_ptr<ShardCache> cache(new ShardCache(std::move(options), std::move(shards)));
  SLUICE_RETURN_IF_ERROR(cache->Init());
  return cache;
}

Status ShardCache::Init() {
  pid_ = ::getpid();
  paths_.reserve(shards_.size());
  for (const ShardSpec& s : shards_) {
    paths_.push_back(JoinPath(options_.root, s.name));
    companion_paths_.push_back(s.companion.empty() ? "" : JoinPath(options_.root, s.companion));
  }
  SLUICE_RETURN_IF_ERROR(MakeDirs(options_.root).WithContext(Prefix()));
  SLUICE_ASSIGN_OR_RETURN(root_dir_, ConfinedDir::Open(options_.root));
  SLUICE_RETURN_IF_ERROR(root_dir_.OpenFolder(cl::kStateDir, true).status().WithContext(Prefix()));
  const std::string state_dir = JoinPath(options_.root, cl::kStateDir);
  lock_path_ = JoinPath(state_dir, cl::kLockFile);
  state_path_ = JoinPath(state_dir, cl::kStateFile);
  SLUICE_ASSIGN_OR_RETURN(pin_fd_, OpenLockFile(lock_path_));

  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  auto state_fd = root_dir_.OpenFile(JoinPath(cl::kStateDir, cl::kStateFile), O_RDWR | O_CREAT);
  if (!state_fd.ok()) return state_fd.status().WithContext(Prefix());
  struct stat st;
  if (::fstat(state_fd->get(), &st) != 0) {
    return ErrnoStatus("cannot stat", state_path_, errno).WithContext(Prefix());
  }
  map_size_ = sizeof(cl::CacheStateHeader) + shards_.size() * sizeof(cl::CacheShardRecord);
  const uint64_t fingerprint = Fingerprint(shards_);
  auto map = [&]() -> Status {
    map_ = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, state_fd->get(), 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      return ErrnoStatus("cannot map", state_path_, errno).WithContext(Prefix());
    }
    header_ = static_cast<cl::CacheStateHeader*>(map_);
    records_ = reinterpret_cast<cl::CacheShardRecord*>(static_cast<char*>(map_) +
                                                       sizeof(cl::CacheStateHeader));
    return Status::Ok();
  };

  bool valid = false;
  if (static_cast<uint64_t>(st.st_size) == map_size_) {
    SLUICE_RETURN_IF_ERROR(map());
    valid = std::memcmp(header_->magic, cl::kStateMagic, sizeof(cl::kStateMagic)) == 0 &&
            Load(header_->version) == cl::kStateVersion &&
            Load(header_->record_size) == sizeof(cl::CacheShardRecord) &&
            Load(header_->shard_count) == shards_.size() &&
            Load(header_->fingerprint) == fingerprint && Load(header_->initialized) == 1;
  }
  if (!valid) {
    // Re-initialising is only safe when no other ShardCache uses the folder.
    SLUICE_ASSIGN_OR_RETURN(bool alone, TryLockByte(global.fd(), cl::kUsersByte, true));
    if (!alone) {
      return InvalidArgumentError(Prefix() + ": the folder is in use by another process with a "
                                  "different shard list (" + std::to_string(shards_.size()) +
                                  " shards here)");
    }
    SLUICE_RETURN_IF_ERROR(UnlockByte(global.fd(), cl::kUsersByte));
    if (map_ != nullptr) ::munmap(map_, map_size_);
    map_ = nullptr;
    header_ = nullptr;
    records_ = nullptr;
    if (::ftruncate(state_fd->get(), 0) != 0 ||
        ::ftruncate(state_fd->get(), static_cast<off_t>(map_size_)) != 0) {
      return ErrnoStatus("cannot size", state_path_, errno).WithContext(Prefix());
    }
    SLUICE_RETURN_IF_ERROR(map());
    std::memcpy(header_->magic, cl::kStateMagic, sizeof(cl::kStateMagic));
    Store(header_->version, cl::kStateVersion);
    Store(header_->record_size, static_cast<uint32_t>(sizeof(cl::CacheShardRecord)));
    Store(header_->shard_count, static_cast<uint64_t>(shards_.size()));
    Store(header_->fingerprint, fingerprint);
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.fd()));
    Store(header_->initialized, uint64_t{1});
  } else if (Load(header_->dirty) != 0) {
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.fd()));
  }
  SLUICE_RETURN_IF_ERROR(ReclaimDeadFetchesLocked(global.fd()));
  SweepDeadTemps();
  // Only exclusive holders can conflict, and they hold global too.
  SLUICE_ASSIGN_OR_RETURN(bool user, TryLockByte(pin_fd_.get(), cl::kUsersByte, false));
  if (!user) return InternalError(Prefix() + ": users lock conflicts while holding the cache lock");
  return Status::Ok();
}

std::string ShardCache::Prefix() const { return "shard cache '" + options_.root + "'"; }

std::string ShardCache::Describe(size_t shard) const {
  return "shard " + std::to_string(shard) + " '" + shards_[shard].name + "'";
}

Status ShardCache::CheckUsable(size_t shard) const {
  pid_t now = ::getpid();
  if (now != pid_) {
    return InvalidArgumentError(Prefix() + ": opened in process " + std::to_string(pid_) +
                                " and used in process " + std::to_string(now) +
                                " after fork; open a new ShardCache in each process");
  }
  if (shard >= shards_.size()) {
    return OutOfRangeError(Prefix() + ": shard " + std::to_string(shard) + " out of range (" +
                           std::to_string(shards_.size()) + " shards)");
  }
  return Status::Ok();
}

int ShardCache::FileState(size_t shard) const {
  auto st = root_dir_.Stat(shards_[shard].name, /*follow_links=*/!options_.evictable);
  if (!st.ok()) return st.status().code() == StatusCode::kNotFound ? 0 : -1;
  return S_ISREG(st->st_mode) && static_cast<uint64_t>(st->st_size) == shards_[shard].bytes ? 1
                                                                                           : -1;
}

uint64_t ShardCache::KeptBytes(size_t shard) const {
  uint64_t kept = shards_[shard].bytes;
  if (!shards_[shard].companion.empty() && root_dir_.Stat(shards_[shard].companion).ok()) {
    kept += shards_[shard].companion_bytes;
  }
  return kept;
}

uint64_t ShardCache::FetchBytes(size_t shard) const {
  return shards_[shard].bytes + std::max(shards_[shard].fetch_extra, shards_[shard].companion_bytes);
}

Status ShardCache::DeleteFiles(size_t shard, int state) {
  if (state != 0) SLUICE_RETURN_IF_ERROR(root_dir_.Remove(shards_[shard].name));
  if (!shards_[shard].companion.empty()) (void)root_dir_.Remove(shards_[shard].companion);
  return Status::Ok();
}

bool ShardCache::IsPresent(size_t shard) const {
  return shard < shards_.size() && FileState(shard) == 1;
}

std::string ShardCache::TempName(size_t shard, const TempOwner& owner, uint32_t seq) const {
  return TempPathFor(shards_[shard].name, owner, seq);
}

uint64_t ShardCache::bytes_used() const { return Load(header_->bytes_used); }

CacheCounters ShardCache::counters() const {
  CacheCounters c;
  c.shards_fetched = shards_fetched_.load();
  c.bytes_fetched = bytes_fetched_.load();
  c.shards_evicted = shards_evicted_.load();
  c.cache_hits = cache_hits_.load();
  c.wait_time = std::chrono::nanoseconds(wait_ns_.load());
  return c;
}

void ShardCache::Touch(size_t shard) {
  uint64_t stamp = std::atomic_ref<uint64_t>(header_->access_clock).fetch_add(1) + 1;
  Store(records_[shard].last_access, stamp);
}

// ----------------------------------------------------------------- waiting

Status ShardCache::WaitUntil(Clock::time_point deadline, const std::atomic<bool>* cancel,
                             const std::function<Result<bool>()>& attempt,
                             const std::function<std::string(bool timed_out)>& waiting) {
  const auto start = Clock::now();
  auto poll = std::chrono::duration_cast<Clock::duration>(kFirstPoll);
  bool waited = false;
  auto count = [&] {
    if (waited) wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
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
      return DeadlineExceededError(Prefix() + ": wait_timeout of " +
                                                       std::to_string(TimeoutMs()) +
                                                       " ms expired " + waiting(true));
    }
    std::this_thread::sleep_for(std::min(poll, deadline - now));
    poll = std::min<Clock::duration>(poll * 2, kMaxPoll);
  }
}

Status ShardCache::LockUntil(int fd, off_t byte, bool exclusive, Clock::time_point deadline,
                             const std::function<std::string()>& waiting_for,
                             const std::atomic<bool>* cancel) {
  return WaitUntil(
      deadline, cancel, [&] { return TryLockByte(fd, byte, exclusive); },
      [&](bool) { return "waiting for " + waiting_for(); });
}

Result<ShardCache::GlobalLock> ShardCache::LockGlobal(Clock::time_point deadline) {
  SLUICE_ASSIGN_OR_RETURN(UniqueFd fd, OpenLockFile(lock_path_));
  SLUICE_RETURN_IF_ERROR(LockUntil(fd.get(), cl::kGlobalByte, true, deadline,
                                   [&] { return "the cache lock " + lock_path_; }));
  GlobalLock lock(std::move(fd));
  // A holder killed mid-update leaves dirty set: rebuild from the files.
  if (header_ != nullptr && Load(header_->dirty) != 0) {
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(lock.fd()));
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
        SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(pin_fd_.get(), cl::PinByte(shard), false));
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
    (void)UnlockByte(pin_fd_.get(), cl::PinByte(shard));  // fails only on a bad fd
  }
}

// -------------------------------------------------------------- accounting

void ShardCache::SetAccounted(size_t shard, uint64_t bytes, const DirtyScope&) {
  const uint64_t old = Load(records_[shard].accounted);
  Store(records_[shard].accounted, bytes);
  Store(header_->bytes_used, Minus(Load(header_->bytes_used), old) + bytes);
}

Status ShardCache::RecomputeLocked(int op_fd) {
  std::vector<uint64_t> accounted(shards_.size(), 0);
  for (size_t j = 0; j < shards_.size(); ++j) {
    if (FileState(j) == 1) {
      accounted[j] = KeptBytes(j);
      continue;
    }
    // A live fetcher holds the download byte: its reservation stands.
    SLUICE_ASSIGN_OR_RETURN(bool free, TryLockByte(op_fd, cl::DownloadByte(j), true));
    if (free) {
      SLUICE_RETURN_IF_ERROR(UnlockByte(op_fd, cl::DownloadByte(j)));
    } else {
      accounted[j] = FetchBytes(j);
    }
  }
  DirtyScope dirty(header_);
  uint64_t total = 0;
  for (size_t j = 0; j < shards_.size(); ++j) {
    Store(records_[j].accounted, accounted[j]);
    total += accounted[j];
  }
  Store(header_->bytes_used, total);
  return Status::Ok();
}

Status ShardCache::ReclaimDeadFetchesLocked(int op_fd) {
  for (size_t j = 0; j < shards_.size(); ++j) {
    if (Load(records_[j].temp_pid) == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(bool dead, TryLockByte(op_fd, cl::DownloadByte(j), true));
    if (!dead) continue;  // its fetcher runs
    RemoveStaleTemp(j);
    {
      DirtyScope dirty(header_);
      SetAccounted(j, FileState(j) == 1 ? KeptBytes(j) : 0, dirty);
    }
    SLUICE_RETURN_IF_ERROR(UnlockByte(op_fd, cl::DownloadByte(j)));
  }
  return Status::Ok();
}

void ShardCache::SweepDeadTemps() const {
  std::unordered_set<std::string> folders{""};
  for (const ShardSpec& s : shards_) {
    folders.insert(ParentOf(s.name));
    if (!s.companion.empty()) folders.insert(ParentOf(s.companion));
  }
  for (const std::string& folder : folders) (void)root_dir_.SweepDeadTemps(folder);
}

void ShardCache::RemoveStaleTemp(size_t shard) {
  cl::CacheShardRecord& r = records_[shard];
  const TempOwner owner{Load(r.temp_pid), Load(r.temp_start)};
  if (owner.pid == 0) return;
  const std::string tmp = TempName(shard, owner, Load(r.temp_seq));
  (void)root_dir_.Remove(tmp);
  (void)root_dir_.Remove(ScratchPath(tmp));
  Store(r.temp_pid, uint32_t{0});
  Store(r.temp_seq, uint32_t{0});
  Store(r.temp_start, uint64_t{0});
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

Result<bool> ShardCache::EvictLocked(int op_fd, size_t shard) {
  // A reader or a live fetcher of the shard holds its pin byte shared.
  SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(op_fd, cl::PinByte(shard), true));
  if (!got) return false;
  Status deleted;
  {
    DirtyScope dirty(header_);
    const int state = FileState(shard);
    deleted = DeleteFiles(shard, state);
    if (deleted.ok()) {
      if (state == 1) ++shards_evicted_;
      RemoveStaleTemp(shard);  // no fetcher is alive: it would pin the shard
      SetAccounted(shard, 0, dirty);
    }
  }
  SLUICE_RETURN_IF_ERROR(UnlockByte(op_fd, cl::PinByte(shard)));
  if (!deleted.ok()) return deleted;
  return true;
}

Status ShardCache::MakeRoom(size_t shard, Clock::time_point deadline,
                            const std::atomic<bool>* cancel) {
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
      for (size_t j = 0; j < shards_.size(); ++j) {
        if (j != shard && Load(records_[j].accounted) != 0) {
          lru.emplace_back(Load(records_[j].last_access), j);
        }
      }
      std::sort(lru.begin(), lru.end());
      for (const auto& [stamp, j] : lru) {
        if (used + need <= limit) break;
        Result<bool> evicted = EvictLocked(global.fd(), j);
        if (!evicted.ok() || !*evicted) {
          pinned.push_back(j);  // a file that cannot be deleted waits like a pin
          continue;
        }
        used = Load(header_->bytes_used);
      }
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
      list += Describe(pinned[k]) + " (" + std::to_string(shards_[pinned[k]].bytes) + " bytes)";
    }
    if (pinned.size() > 8) list += " and " + std::to_string(pinned.size() - 8) + " more";
    return "waiting for room for " + Describe(shard) + " (" + std::to_string(size) +
           " bytes) under cache_limit " + std::to_string(limit) + " bytes: " +
           std::to_string(used) + " bytes in use; pinned or being fetched: " + list;
  };
  return WaitUntil(deadline, cancel, attempt, waiting);
}

// ------------------------------------------------------------------ fetch

Result<ShardPin> ShardCache::Acquire(size_t shard, const FetchFn& fetch,
                                     const std::atomic<bool>* cancel) {
  SLUICE_RETURN_IF_ERROR(CheckUsable(shard));
  const auto deadline = Clock::now() + options_.wait_timeout;
  SLUICE_RETURN_IF_ERROR(Pin(shard, deadline));
  ShardPin pin(this, shard);  // unpins on every error path
  auto hit = [&]() -> Result<ShardPin> {
    if (Load(records_[shard].accounted) == 0) AccountPresent(shard);
    Touch(shard);
    ++cache_hits_;
    return std::move(pin);
  };
  if (FileState(shard) == 1) return hit();

  SLUICE_ASSIGN_OR_RETURN(UniqueFd download, OpenLockFile(lock_path_));
  SLUICE_RETURN_IF_ERROR(LockUntil(
      download.get(), cl::DownloadByte(shard), true, deadline, [&] {
        uint32_t by = Load(records_[shard].temp_pid);
        return Describe(shard) + " to be fetched by " +
               (by != 0 ? "process " + std::to_string(by) : std::string("another process"));
      }, cancel));
  const int state = FileState(shard);
  if (state == 1) return hit();  // fetched by the process we waited for
  SLUICE_RETURN_IF_ERROR(FetchLocked(shard, state, fetch, deadline, cancel));
  Touch(shard);
  ++shards_fetched_;
  bytes_fetched_ += shards_[shard].bytes;
  return pin;
}

Status ShardCache::FetchLocked(size_t shard, int state, const FetchFn& fetch,
                               Clock::time_point deadline, const std::atomic<bool>* cancel) {
  const ShardSpec& spec = shards_[shard];
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
  Status room = MakeRoom(shard, deadline, cancel);
  if (!room.ok()) {
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
  return Status::Ok();
}

Status ShardCache::FetchInto(size_t shard, const std::string& tmp, const FetchFn& fetch) {
  const ShardSpec& spec = shards_[shard];
  const std::string context = Prefix() + ": fetching " + Describe(shard);
  SLUICE_RETURN_IF_ERROR(root_dir_.OpenFolder(ParentOf(spec.name), true).status().WithContext(context));
  const std::string tmp_path = root_dir_.PathOf(tmp);
  SLUICE_RETURN_IF_ERROR(fetch(tmp_path).WithContext(context));
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
  return root_dir_.Rename(tmp, spec.name).WithContext(Prefix());
}

Status ShardCache::Evict(size_t shard) {
  SLUICE_RETURN_IF_ERROR(CheckUsable(shard));
  if (!options_.evictable) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": eviction is disabled (no remote: local shards are never "
                                "deleted)");
  }
  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  Result<bool> evicted = EvictLocked(global.fd(), shard);
  if (!evicted.ok()) return evicted.status().WithContext(Prefix());
  if (!*evicted) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": a process pins it");
  }
  return Status::Ok();
}

}  // namespace sluice

#include "engine/cache/shard_cache.h"

#include <dirent.h>
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

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

// Holds the global byte through its own open file description.
class ShardCache::GlobalLock {
 public:
  explicit GlobalLock(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
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
  const std::string state_dir = JoinPath(options_.root, cl::kStateDir);
  SLUICE_RETURN_IF_ERROR(MakeDirs(state_dir).WithContext(Prefix()));
  lock_path_ = JoinPath(state_dir, cl::kLockFile);
  state_path_ = JoinPath(state_dir, cl::kStateFile);
  SLUICE_ASSIGN_OR_RETURN(pin_fd_, OpenLockFile(lock_path_));

  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  UniqueFd state_fd(::open(state_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!state_fd.valid()) {
    return IoError(Prefix() + ": cannot open " + state_path_ + ": " + Errno(errno));
  }
  struct stat st;
  if (::fstat(state_fd.get(), &st) != 0) {
    return IoError(Prefix() + ": cannot stat " + state_path_ + ": " + Errno(errno));
  }
  map_size_ = sizeof(cl::CacheStateHeader) + shards_.size() * sizeof(cl::CacheShardRecord);
  const uint64_t fingerprint = Fingerprint(shards_);
  auto map = [&]() -> Status {
    map_ = ::mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, state_fd.get(), 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      return IoError(Prefix() + ": cannot map " + state_path_ + ": " + Errno(errno));
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
    if (::ftruncate(state_fd.get(), 0) != 0 ||
        ::ftruncate(state_fd.get(), static_cast<off_t>(map_size_)) != 0) {
      return IoError(Prefix() + ": cannot size " + state_path_ + ": " + Errno(errno));
    }
    SLUICE_RETURN_IF_ERROR(map());
    std::memcpy(header_->magic, cl::kStateMagic, sizeof(cl::kStateMagic));
    Store(header_->version, cl::kStateVersion);
    Store(header_->record_size, static_cast<uint32_t>(sizeof(cl::CacheShardRecord)));
    Store(header_->shard_count, static_cast<uint64_t>(shards_.size()));
    Store(header_->fingerprint, fingerprint);
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.fd(), /*scan_temps=*/true));
    Store(header_->initialized, uint64_t{1});
  } else if (Load(header_->dirty) != 0) {
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(global.fd(), /*scan_temps=*/false));
  }
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
  struct stat st;
  if (::stat(paths_[shard].c_str(), &st) != 0) return errno == ENOENT ? 0 : -1;
  return S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == shards_[shard].bytes ? 1
                                                                                         : -1;
}

uint64_t ShardCache::KeptBytes(size_t shard) const {
  uint64_t kept = shards_[shard].bytes;
  if (!companion_paths_[shard].empty()) {
    struct stat st;
    if (::stat(companion_paths_[shard].c_str(), &st) == 0) kept += shards_[shard].companion_bytes;
  }
  return kept;
}

uint64_t ShardCache::FetchBytes(size_t shard) const {
  return shards_[shard].bytes + std::max(shards_[shard].fetch_extra, shards_[shard].companion_bytes);
}

bool ShardCache::DeleteFiles(size_t shard, int state) {
  if (state != 0 && ::unlink(paths_[shard].c_str()) != 0 && errno != ENOENT) return false;
  if (!companion_paths_[shard].empty()) ::unlink(companion_paths_[shard].c_str());
  return true;
}

bool ShardCache::IsPresent(size_t shard) const {
  return shard < shards_.size() && FileState(shard) == 1;
}

std::string ShardCache::TempPath(size_t shard, uint32_t pid, uint32_t seq) const {
  return paths_[shard] + ".tmp." + std::to_string(pid) + "." + std::to_string(seq);
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

Status ShardCache::LockUntil(int fd, off_t byte, bool exclusive, Clock::time_point deadline,
                             const std::function<std::string()>& waiting_for,
                             const std::atomic<bool>* cancel) {
  SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(fd, byte, exclusive));
  if (got) return Status::Ok();
  const auto start = Clock::now();
  auto poll = std::chrono::duration_cast<Clock::duration>(kFirstPoll);
  for (;;) {
    auto now = Clock::now();
    if (cancel != nullptr && cancel->load()) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
      return Status(StatusCode::kCancelled, Prefix() + ": cancelled waiting for " + waiting_for());
    }
    if (now >= deadline) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
      return Status(StatusCode::kDeadlineExceeded,
                    Prefix() + ": wait_timeout of " + std::to_string(TimeoutMs()) +
                        " ms expired waiting for " + waiting_for());
    }
    std::this_thread::sleep_for(std::min(poll, deadline - now));
    poll = std::min<Clock::duration>(poll * 2, kMaxPoll);
    SLUICE_ASSIGN_OR_RETURN(got, TryLockByte(fd, byte, exclusive));
    if (got) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
                      .count();
      return Status::Ok();
    }
  }
}

Result<ShardCache::GlobalLock> ShardCache::LockGlobal(Clock::time_point deadline) {
  SLUICE_ASSIGN_OR_RETURN(UniqueFd fd, OpenLockFile(lock_path_));
  SLUICE_RETURN_IF_ERROR(LockUntil(fd.get(), cl::kGlobalByte, true, deadline,
                                   [&] { return "the cache lock " + lock_path_; }));
  GlobalLock lock(std::move(fd));
  // A holder killed mid-update leaves dirty set: rebuild from the files.
  if (header_ != nullptr && Load(header_->dirty) != 0) {
    SLUICE_RETURN_IF_ERROR(RecomputeLocked(lock.fd(), /*scan_temps=*/false));
  }
  return lock;
}

Status ShardCache::RecomputeLocked(int op_fd, bool scan_temps) {
  Store(header_->dirty, uint64_t{1});
  uint64_t total = 0;
  for (size_t j = 0; j < shards_.size(); ++j) {
    uint64_t accounted = 0;
    if (FileState(j) == 1) {
      accounted = KeptBytes(j);
    } else {
      // A live fetcher holds the download byte: its reservation stands.
      SLUICE_ASSIGN_OR_RETURN(bool free, TryLockByte(op_fd, cl::DownloadByte(j), true));
      if (free) {
        SLUICE_RETURN_IF_ERROR(UnlockByte(op_fd, cl::DownloadByte(j)));
      } else {
        accounted = FetchBytes(j);
      }
    }
    Store(records_[j].accounted, accounted);
    total += accounted;
  }
  Store(header_->bytes_used, total);
  if (scan_temps) {
    // A fresh state file knows no temp files, and nobody else uses the
    // folder (the caller checked the users byte): every temp is stale.
    std::unordered_set<std::string> names;
    std::unordered_set<std::string> dirs;
    for (const std::string& p : paths_) {
      names.insert(p);
      dirs.insert(p.substr(0, p.rfind('/') == std::string::npos ? 0 : p.rfind('/')));
    }
    for (const std::string& dir : dirs) {
      DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
      if (d == nullptr) continue;
      std::vector<std::string> stale;
      while (struct dirent* e = ::readdir(d)) {
        std::string full = JoinPath(dir, e->d_name);
        size_t at = full.rfind(".tmp.");
        if (at == std::string::npos || names.count(full.substr(0, at)) == 0) continue;
        std::string_view tail(full.data() + at + 5, full.size() - at - 5);
        constexpr std::string_view kScratch = ".scratch";
        if (tail.size() > kScratch.size() && tail.substr(tail.size() - kScratch.size()) == kScratch) {
          tail.remove_suffix(kScratch.size());
        }
        size_t dot = tail.find('.');
        auto digits = [](std::string_view s) {
          return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
            return c >= '0' && c <= '9';
          });
        };
        if (dot != std::string_view::npos && digits(tail.substr(0, dot)) &&
            digits(tail.substr(dot + 1))) {
          stale.push_back(std::move(full));
        }
      }
      ::closedir(d);
      for (const std::string& f : stale) ::unlink(f.c_str());
    }
  }
  Store(header_->dirty, uint64_t{0});
  return Status::Ok();
}

Status ShardCache::Pin(size_t shard, Clock::time_point deadline) {
  const auto start = Clock::now();
  auto poll = std::chrono::duration_cast<Clock::duration>(kFirstPoll);
  bool waited = false;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(pin_mu_);
      auto it = pin_counts_.find(shard);
      if (it != pin_counts_.end()) {
        ++it->second;
        break;
      }
      // Fails only while an evictor holds the pin byte, which is brief.
      SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(pin_fd_.get(), cl::PinByte(shard), false));
      if (got) {
        pin_counts_.emplace(shard, 1);
        break;
      }
    }
    waited = true;
    auto now = Clock::now();
    if (now >= deadline) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
      return Status(StatusCode::kDeadlineExceeded,
                    Prefix() + ": wait_timeout of " + std::to_string(TimeoutMs()) +
                        " ms expired waiting to pin " + Describe(shard) +
                        " while another process evicts it");
    }
    std::this_thread::sleep_for(std::min(poll, deadline - now));
    poll = std::min<Clock::duration>(poll * 2, kMaxPoll);
  }
  if (waited) {
    wait_ns_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }
  return Status::Ok();
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

void ShardCache::RemoveStaleTemp(size_t shard) {
  cl::CacheShardRecord& r = records_[shard];
  uint32_t pid = Load(r.temp_pid);
  if (pid == 0) return;
  const std::string tmp = TempPath(shard, pid, Load(r.temp_seq));
  ::unlink(tmp.c_str());
  ::unlink(ScratchPath(tmp).c_str());
  Store(r.temp_pid, uint32_t{0});
  Store(r.temp_seq, uint32_t{0});
}

void ShardCache::AccountPresent(size_t shard) {
  // A present file nobody accounted (copied in by hand, or its accounting
  // was lost): count it so eviction can see it. Best effort: a hit does not
  // fail because the cache lock is busy.
  auto global = LockGlobal(Clock::now() + options_.wait_timeout);
  if (!global.ok()) return;
  cl::CacheShardRecord& r = records_[shard];
  if (Load(r.accounted) != 0 || FileState(shard) != 1) return;
  Store(header_->dirty, uint64_t{1});
  const uint64_t kept = KeptBytes(shard);
  Store(r.accounted, kept);
  Store(header_->bytes_used, Load(header_->bytes_used) + kept);
  Store(header_->dirty, uint64_t{0});
}

Status ShardCache::ReleaseReservation(size_t shard) {
  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  cl::CacheShardRecord& r = records_[shard];
  uint64_t accounted = Load(r.accounted);
  if (accounted == 0 || FileState(shard) == 1) return Status::Ok();
  Store(header_->dirty, uint64_t{1});
  Store(r.accounted, uint64_t{0});
  Store(header_->bytes_used, Minus(Load(header_->bytes_used), accounted));
  Store(header_->dirty, uint64_t{0});
  return Status::Ok();
}

void ShardCache::SettleAccounting(size_t shard) {
  // The fetch's reservation becomes what the shard keeps (its scratch file is
  // gone). If the cache lock is busy past wait_timeout the reservation
  // stays: an over-count, never an under-count.
  auto global = LockGlobal(Clock::now() + options_.wait_timeout);
  if (!global.ok()) return;
  cl::CacheShardRecord& r = records_[shard];
  const uint64_t accounted = Load(r.accounted);
  const uint64_t kept = KeptBytes(shard);
  if (accounted == kept) return;
  Store(header_->dirty, uint64_t{1});
  Store(r.accounted, kept);
  Store(header_->bytes_used, Minus(Load(header_->bytes_used), accounted) + kept);
  Store(header_->dirty, uint64_t{0});
}

Status ShardCache::MakeRoom(size_t shard, Clock::time_point deadline,
                            const std::atomic<bool>* cancel) {
  const uint64_t limit = options_.cache_limit;
  const uint64_t size = FetchBytes(shard);
  const auto start = Clock::now();
  auto poll = std::chrono::duration_cast<Clock::duration>(kFirstPoll);
  bool waited = false;
  for (;;) {
    std::vector<size_t> pinned;
    uint64_t used;
    {
      SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(deadline));
      // Partly or wholly accounted already (a reservation left by a dead
      // fetcher, a file that vanished, or a rebuild that saw our download
      // lock): add what is missing; the total must still fit.
      const uint64_t have = Load(records_[shard].accounted);
      const uint64_t need = Minus(size, have);
      used = Load(header_->bytes_used);
      if (limit != 0 && used + need > limit) {
        if (!options_.evictable) {
          if (need == 0) break;  // nothing may be deleted; we add nothing
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
          // A reader or a live fetcher of j holds its pin byte shared.
          SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(global.fd(), cl::PinByte(j), true));
          if (!got) {
            pinned.push_back(j);
            continue;
          }
          Store(header_->dirty, uint64_t{1});
          int state = FileState(j);
          if (!DeleteFiles(j, state)) {
            Store(header_->dirty, uint64_t{0});
            (void)UnlockByte(global.fd(), cl::PinByte(j));
            pinned.push_back(j);
            continue;
          }
          if (state == 1) ++shards_evicted_;
          RemoveStaleTemp(j);  // no fetcher is alive: it would pin j
          uint64_t accounted = Load(records_[j].accounted);
          Store(records_[j].accounted, uint64_t{0});
          used = Minus(used, accounted);
          Store(header_->bytes_used, used);
          Store(header_->dirty, uint64_t{0});
          SLUICE_RETURN_IF_ERROR(UnlockByte(global.fd(), cl::PinByte(j)));
        }
      }
      if (limit == 0 || used + need <= limit) {
        if (need != 0) {
          Store(header_->dirty, uint64_t{1});
          Store(records_[shard].accounted, have + need);
          Store(header_->bytes_used, used + need);
          Store(header_->dirty, uint64_t{0});
        }
        break;
      }
    }  // releases global while waiting for readers to unpin
    auto now = Clock::now();
    if (cancel != nullptr && cancel->load()) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
      return Status(StatusCode::kCancelled, Prefix() + ": cancelled waiting for room for " +
                                                Describe(shard) + " under cache_limit");
    }
    if (now >= deadline) {
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
      std::sort(pinned.begin(), pinned.end());
      std::string list;
      for (size_t k = 0; k < pinned.size() && k < 8; ++k) {
        if (k != 0) list += ", ";
        list += Describe(pinned[k]) + " (" + std::to_string(shards_[pinned[k]].bytes) + " bytes)";
      }
      if (pinned.size() > 8) list += " and " + std::to_string(pinned.size() - 8) + " more";
      return Status(StatusCode::kDeadlineExceeded,
                    Prefix() + ": wait_timeout of " + std::to_string(TimeoutMs()) +
                        " ms expired waiting for room for " + Describe(shard) + " (" +
                        std::to_string(size) + " bytes) under cache_limit " +
                        std::to_string(limit) + " bytes: " + std::to_string(used) +
                        " bytes in use; pinned or being fetched: " + list);
    }
    waited = true;
    std::this_thread::sleep_for(std::min(poll, deadline - now));
    poll = std::min<Clock::duration>(poll * 2, kMaxPoll);
  }
  if (waited) {
    wait_ns_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  }
  return Status::Ok();
}

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
  int state = FileState(shard);
  if (state == 1) return hit();  // fetched by the process we waited for

  // We hold the download byte, so the recorded fetcher is dead.
  RemoveStaleTemp(shard);
  if (state == -1 && options_.evictable) ::unlink(paths_[shard].c_str());
  // A companion without its shard is left over from a crash: unaccounted.
  if (!companion_paths_[shard].empty()) ::unlink(companion_paths_[shard].c_str());
  const uint32_t seq = ++temp_seq_;
  Store(records_[shard].temp_pid, static_cast<uint32_t>(pid_));
  Store(records_[shard].temp_seq, seq);
  const std::string tmp = TempPath(shard, static_cast<uint32_t>(pid_), seq);
  auto clear_temp = [&] {
    Store(records_[shard].temp_pid, uint32_t{0});
    Store(records_[shard].temp_seq, uint32_t{0});
  };
  Status room = MakeRoom(shard, deadline, cancel);
  if (!room.ok()) {
    clear_temp();
    return room;
  }

  Status st;
  size_t slash = paths_[shard].rfind('/');
  if (slash != std::string::npos && slash > options_.root.size()) {
    st = MakeDirs(paths_[shard].substr(0, slash)).WithContext(Prefix());
  }
  if (st.ok()) {
    st = fetch(tmp).WithContext(Prefix() + ": fetching " + Describe(shard));
  }
  if (st.ok()) {
    struct stat s;
    if (::stat(tmp.c_str(), &s) != 0) {
      st = IoError(Prefix() + ": fetching " + Describe(shard) + ": the fetch left no file at " +
                   tmp + ": " + Errno(errno));
    } else if (static_cast<uint64_t>(s.st_size) != shards_[shard].bytes) {
      st = CorruptError(Prefix() + ": fetching " + Describe(shard) + ": wrote " +
                        std::to_string(s.st_size) + " bytes to " + tmp + ", expected " +
                        std::to_string(shards_[shard].bytes));
    } else if (::rename(tmp.c_str(), paths_[shard].c_str()) != 0) {
      st = IoError(Prefix() + ": cannot rename " + tmp + " to " + paths_[shard] + ": " +
                   Errno(errno));
    }
  }
  ::unlink(ScratchPath(tmp).c_str());
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    if (!companion_paths_[shard].empty()) ::unlink(companion_paths_[shard].c_str());
    clear_temp();
    (void)ReleaseReservation(shard);  // if the lock is busy, the next holder repairs it
    return st;
  }
  clear_temp();
  SettleAccounting(shard);
  Touch(shard);
  ++shards_fetched_;
  bytes_fetched_ += shards_[shard].bytes;
  return pin;
}

Status ShardCache::Evict(size_t shard) {
  SLUICE_RETURN_IF_ERROR(CheckUsable(shard));
  if (!options_.evictable) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": eviction is disabled (no remote: local shards are never "
                                "deleted)");
  }
  SLUICE_ASSIGN_OR_RETURN(GlobalLock global, LockGlobal(Clock::now() + options_.wait_timeout));
  SLUICE_ASSIGN_OR_RETURN(bool got, TryLockByte(global.fd(), cl::PinByte(shard), true));
  if (!got) {
    return InvalidArgumentError(Prefix() + ": cannot evict " + Describe(shard) +
                                ": a process pins it");
  }
  Store(header_->dirty, uint64_t{1});
  int state = FileState(shard);
  if (!DeleteFiles(shard, state)) {
    int err = errno;
    Store(header_->dirty, uint64_t{0});
    return IoError(Prefix() + ": cannot delete " + paths_[shard] + ": " + Errno(err));
  }
  if (state == 1) ++shards_evicted_;
  RemoveStaleTemp(shard);
  uint64_t accounted = Load(records_[shard].accounted);
  Store(records_[shard].accounted, uint64_t{0});
  Store(header_->bytes_used, Minus(Load(header_->bytes_used), accounted));
  Store(header_->dirty, uint64_t{0});
  return UnlockByte(global.fd(), cl::PinByte(shard));
}

}  // namespace sluice

#include "base/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace sluice {
namespace {

constexpr std::string_view kTempMarker = ".sluice-tmp.";
constexpr size_t kTempBaseMax = 128;

// Start time of process `pid` in clock ticks after boot (field 22 of
// /proc/<pid>/stat, counted after the parenthesised command name, which may
// hold spaces), or nothing when unreadable.
std::optional<uint64_t> ProcessStart(uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  size_t close = s.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(s.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  uint64_t start = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), start);
  if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return start;
}

template <typename T>
bool ParseDecimal(std::string_view s, T* out) {
  if (s.empty() || s.size() > 20) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Splits "a/b/c" into its non-empty components; "." and ".." are refused,
// since they would leave (or pretend to leave) the confining folder.
Result<std::vector<std::string_view>> Components(std::string_view rel, std::string_view root) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    std::string_view part = rel.substr(start, end - start);
    if (part == "." || part == "..") {
      return InvalidArgumentError("'" + std::string(rel) + "' has a '.' or '..' component: " +
                                  "it must stay beneath " + std::string(root));
    }
    if (!part.empty()) out.push_back(part);
    start = end + 1;
  }
  return out;
}

// What a ConfinedDir says when it meets a link.
Status LinkError(const std::string& path, const std::string& root) {
  return InvalidArgumentError(path + " is a symbolic link: nothing beneath " + root +
                              " is reached through one");
}

}  // namespace

Status ErrnoStatus(std::string_view what, std::string_view path, int err) {
  std::string msg = std::string(what) + " " + std::string(path) + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return NotFoundError(std::move(msg));
  if (err == EACCES || err == EPERM) return PermissionDeniedError(std::move(msg));
  return IoError(std::move(msg));
}

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

Status OwnedFd::Close(std::string_view path) {
  int fd = Release();
  if (fd >= 0 && ::close(fd) != 0) return ErrnoStatus("cannot close", path, errno);
  return Status::Ok();
}

// ------------------------------------------------------ temporary files

TempOwner ThisProcessTempOwner() {
  // Cached per pid: a forked child sees another pid and computes its own.
  static std::atomic<uint32_t> cached_pid{0};
  static std::atomic<uint64_t> cached_start{0};
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  if (cached_pid.load(std::memory_order_acquire) != pid) {
    cached_start.store(ProcessStart(pid).value_or(0), std::memory_order_relaxed);
    cached_pid.store(pid, std::memory_order_release);
  }
  return {pid, cached_start.load(std::memory_order_relaxed)};
}

bool TempOwnerGone(const TempOwner& owner) {
  if (owner.pid == 0) return true;
  if (::kill(static_cast<pid_t>(owner.pid), 0) != 0 && errno == ESRCH) return true;
  if (owner.start == 0) return false;  // unknown start: a live pid is the owner
  std::optional<uint64_t> start = ProcessStart(owner.pid);
  return start.has_value() && *start != owner.start;  // the pid was reused
}

uint32_t NextTempSeq() {
  static std::atomic<uint32_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

std::string TempPathFor(std::string_view final_path, const TempOwner& owner, uint32_t seq) {
  size_t slash = final_path.rfind('/');
  std::string_view dir = slash == std::string_view::npos ? "" : final_path.substr(0, slash + 1);
  std::string_view base = slash == std::string_view::npos ? final_path : final_path.substr(slash + 1);
  std::string out(dir);
  out += '.';
  out += base.substr(0, kTempBaseMax);
  out += kTempMarker;
  out += std::to_string(owner.pid) + "." + std::to_string(owner.start) + "." + std::to_string(seq);
  return out;
}

std::string TempPathFor(std::string_view final_path) {
  return TempPathFor(final_path, ThisProcessTempOwner(), NextTempSeq());
}

std::optional<TempName> ParseTempName(std::string_view name) {
  if (name.size() < 2 || name.front() != '.' || name.find('/') != std::string_view::npos) {
    return std::nullopt;
  }
  size_t at = name.rfind(kTempMarker);
  if (at == std::string_view::npos || at < 2) return std::nullopt;  // ".<base>" comes first
  std::string_view tail = name.substr(at + kTempMarker.size());
  std::string_view parts[4];
  size_t n = 0;
  while (n < 4) {
    size_t dot = tail.find('.');
    parts[n++] = tail.substr(0, dot);
    if (dot == std::string_view::npos) break;
    tail.remove_prefix(dot + 1);
    if (n == 4) return std::nullopt;  // more than pid.start.seq.tag
  }
  TempName out;
  if (n < 3 || !ParseDecimal(parts[0], &out.owner.pid) ||
      !ParseDecimal(parts[1], &out.owner.start) || !ParseDecimal(parts[2], &out.seq)) {
    return std::nullopt;
  }
  if (n == 4 && (parts[3].empty() || !std::all_of(parts[3].begin(), parts[3].end(), [](char c) {
                   return c >= 'a' && c <= 'z';
                 }))) {
    return std::nullopt;
  }
  return out;
}

bool IsTempOfThisProcess(std::string_view path) {
  size_t slash = path.rfind('/');
  auto parsed = ParseTempName(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return parsed.has_value() && parsed->owner == ThisProcessTempOwner();
}

Result<TempFile> TempFile::Create(const std::string& final_path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
  if (IsTempOfThisProcess(final_path)) {
    OwnedFd fd(::open(final_path.c_str(), kFlags | O_TRUNC, kNewFileMode));
    if (!fd.valid()) return ErrnoStatus("cannot create", final_path, errno);
    return TempFile(final_path, final_path, std::move(fd));
  }
  // O_EXCL: a leftover of an earlier process with this pid and start time
  // (only possible when the start time is unknown) is never reused.
  for (int attempt = 0;; ++attempt) {
    std::string tmp = TempPathFor(final_path);
    OwnedFd fd(::open(tmp.c_str(), kFlags | O_EXCL, kNewFileMode));
    if (fd.valid()) return TempFile(std::move(tmp), final_path, std::move(fd));
    if (errno != EEXIST || attempt == 16) return ErrnoStatus("cannot create", tmp, errno);
  }
}

TempFile::TempFile(TempFile&& other) noexcept
    : path_(std::move(other.path_)),
      final_path_(std::move(other.final_path_)),
      fd_(std::move(other.fd_)),
      done_(std::exchange(other.done_, true)) {}

TempFile::~TempFile() {
  if (done_) return;
  fd_ = OwnedFd();
  ::unlink(path_.c_str());
}

Status TempFile::Commit() {
  if (done_) return InternalError("temporary " + path_ + " committed twice");
  Status st = fd_.Close(path_);
  if (st.ok() && path_ != final_path_ && ::rename(path_.c_str(), final_path_.c_str()) != 0) {
    st = ErrnoStatus("cannot rename " + path_ + " onto", final_path_, errno);
  }
  if (!st.ok()) ::unlink(path_.c_str());
  done_ = true;
  return st;
}

Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  OwnedFd closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  if (S_ISDIR(st.st_mode)) return IoError(path + " is a folder, expected a file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return OutOfRangeError(path + ": file has " + std::to_string(size) +
                           " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::string out(size, '\0');
  uint64_t got = 0;
  while (got < size) {
    ssize_t n = ::pread(fd, out.data() + got, size - got, static_cast<off_t>(got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot read", path, errno);
    }
    if (n == 0) break;  // shrank under us
    got += static_cast<uint64_t>(n);
  }
  out.resize(got);
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  SLUICE_ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(path));
  uint64_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(tmp.fd(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", tmp.path(), errno);
    }
    done += static_cast<uint64_t>(n);
  }
  return tmp.Commit();
}

Status TouchFile(int fd, std::string_view path) {
  if (::futimens(fd, nullptr) != 0) return ErrnoStatus("cannot touch", path, errno);
  return Status::Ok();
}

Result<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  return static_cast<uint64_t>(st.st_size);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::Ok();
  std::string cur;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    cur = path.substr(0, next);
    if (!cur.empty() && ::mkdir(cur.c_str(), kNewFolderMode) != 0 && errno != EEXIST) {
      return ErrnoStatus("cannot create folder", cur, errno);
    }
    pos = next + 1;
  }
  return Status::Ok();
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  std::string out(dir);
  if (out.back() != '/') out += '/';
  out += name;
  return out;
}

// ------------------------------------------------------ confined folders

Result<ConfinedDir> ConfinedDir::Open(const std::string& root) {
  ConfinedDir d;
  d.root_ = root;
  d.fd_ = OwnedFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.fd_.valid()) return ErrnoStatus("cannot open folder", root, errno);
  return d;
}

std::string ConfinedDir::PathOf(std::string_view rel) const {
  return rel.empty() ? root_ : JoinPath(root_, rel);
}

Result<OwnedFd> ConfinedDir::OpenFolder(std::string_view rel, bool create) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> parts, Components(rel, root_));
  OwnedFd cur(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!cur.valid()) return ErrnoStatus("cannot open folder", root_, errno);
  std::string walked;
  for (std::string_view part : parts) {
    walked = walked.empty() ? std::string(part) : walked + "/" + std::string(part);
    const std::string name(part);
    constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(cur.get(), name.c_str(), kFlags);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(cur.get(), name.c_str(), kNewFolderMode) != 0 && errno != EEXIST) {
        return ErrnoStatus("cannot create folder", PathOf(walked), errno);
      }
      fd = ::openat(cur.get(), name.c_str(), kFlags);
    }
    if (fd < 0) {
      const int err = errno;
      struct stat st;
      if ((err == ELOOP || err == ENOTDIR) &&
          ::fstatat(cur.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        return LinkError(PathOf(walked), root_);
      }
      return ErrnoStatus("cannot open folder", PathOf(walked), err);
    }
    cur = OwnedFd(fd);
  }
  return cur;
}

Result<std::pair<OwnedFd, std::string>> ConfinedDir::Parent(std::string_view rel,
                                                             bool create) const {
  size_t slash = rel.rfind('/');
  std::string name(slash == std::string_view::npos ? rel : rel.substr(slash + 1));
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgumentError("'" + std::string(rel) + "' does not name a file beneath " + root_);
  }
  SLUICE_ASSIGN_OR_RETURN(
      OwnedFd dir, OpenFolder(slash == std::string_view::npos ? "" : rel.substr(0, slash), create));
  return std::make_pair(std::move(dir), std::move(name));
}

Result<struct stat> ConfinedDir::Stat(std::string_view rel, bool follow_links) const {
  struct stat st;
  if (follow_links) {
    if (::stat(PathOf(rel).c_str(), &st) != 0) return ErrnoStatus("cannot stat", PathOf(rel), errno);
    return st;
  }
  SLUICE_ASSIGN_OR_RETURN(auto parent, Parent(rel, false));
  if (::fstatat(parent.first.get(), parent.second.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus("cannot stat", PathOf(rel), errno);
  }
  return st;
}

Result<OwnedFd> ConfinedDir::OpenFile(std::string_view rel, int flags) const {
  SLUICE_ASSIGN_OR_RETURN(auto parent, Parent(rel, false));
  OwnedFd fd(::openat(parent.first.get(), parent.second.c_str(), flags | O_CLOEXEC | O_NOFOLLOW,
                      kNewFileMode));
  if (!fd.valid()) {
    if (errno == ELOOP) {
      return LinkError(PathOf(rel), root_);
    }
    return ErrnoStatus("cannot open", PathOf(rel), errno);
  }
  return fd;
}

Status ConfinedDir::Rename(std::string_view from, std::string_view to) const {
  SLUICE_ASSIGN_OR_RETURN(auto src, Parent(from, false));
  SLUICE_ASSIGN_OR_RETURN(auto dst, Parent(to, false));
  if (::renameat(src.first.get(), src.second.c_str(), dst.first.get(), dst.second.c_str()) != 0) {
    return ErrnoStatus("cannot rename " + PathOf(from) + " onto", PathOf(to), errno);
  }
  return Status::Ok();
}

Status ConfinedDir::Remove(std::string_view rel) const {
  auto parent = Parent(rel, false);
  if (!parent.ok()) {
    return parent.status().code() == StatusCode::kNotFound ? Status::Ok() : parent.status();
  }
  if (::unlinkat(parent->first.get(), parent->second.c_str(), 0) != 0 && errno != ENOENT) {
    return ErrnoStatus("cannot delete", PathOf(rel), errno);
  }
  return Status::Ok();
}

size_t ConfinedDir::SweepDeadTemps(std::string_view rel) const {
  auto folder = OpenFolder(rel, false);
  if (!folder.ok()) return 0;
  const int dir_fd = folder->get();
  const int listing = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);  // closedir closes it
  if (listing < 0) return 0;
  DIR* d = ::fdopendir(listing);
  if (d == nullptr) {
    ::close(listing);
    return 0;
  }
  std::vector<std::string> dead;
  std::map<std::pair<uint32_t, uint64_t>, bool> gone;  // one /proc read per owner
  while (struct dirent* e = ::readdir(d)) {
    std::optional<TempName> t = ParseTempName(e->d_name);
    if (!t) continue;
    auto [it, fresh] = gone.try_emplace({t->owner.pid, t->owner.start}, false);
    if (fresh) it->second = TempOwnerGone(t->owner);
    if (it->second) dead.emplace_back(e->d_name);
  }
  ::closedir(d);
  size_t removed = 0;
  for (const std::string& name : dead) {
    if (::unlinkat(dir_fd, name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("cannot open", path, errno);
  return Map(fd.get(), path);
}

namespace {
constexpr uint64_t kHugeHintFrom = uint64_t{2} << 20;  // one huge page
}  // namespace

Result<MappedFile> MappedFile::Map(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
  MappedFile f;
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ == 0) return f;  // mmap of 0 bytes is an error; an empty view is fine
  void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return ErrnoStatus("cannot map", path, errno);
  f.data_ = static_cast<const char*>(p);
  // Pages read in through this map come as huge folios where the file
  // system allows (2 MiB mapped by one entry). Only a hint: errors ignored.
  if (f.size_ >= kHugeHintFrom) (void)::madvise(p, f.size_, MADV_HUGEPAGE);
  return f;
}

bool MappedFile::Populate() const {
  if (!data_) return true;
  // A whole-file read: under AdviseRandom every page would be read on its
  // own (and WillNeed is capped at read_ahead_kb).
  AdviseReadAround();
#ifdef MADV_POPULATE_READ
  return ::madvise(const_cast<char*>(data_), size_, MADV_POPULATE_READ) == 0;
#else
  return false;
#endif
}

bool MappedFile::Resident() const {
  if (!data_) return true;
  // A look at every page of a 64 MiB file costs milliseconds (a page-cache
  // lookup each): probes spread over the file tell a file read back from
  // disk from one still in memory.
  constexpr uint64_t kProbes = 17;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t pages = (size_ + page - 1) / page;
  for (uint64_t k = 0; k < kProbes; ++k) {
    const uint64_t at = k * (pages - 1) / (kProbes - 1);
    unsigned char in_core = 0;
    if (::mincore(const_cast<char*>(data_) + at * page, 1, &in_core) != 0) return true;
    if ((in_core & 1) == 0) return false;
    if (pages == 1) break;
  }
  return true;
}

void MappedFile::AdviseRandom() const {
  if (!data_) return;
  (void)::madvise(const_cast<char*>(data_), size_, MADV_NOHUGEPAGE);
  (void)::madvise(const_cast<char*>(data_), size_, MADV_RANDOM);
}

void MappedFile::AdviseReadAround() const {
  if (!data_) return;
  (void)::madvise(const_cast<char*>(data_), size_, MADV_NORMAL);
  if (size_ >= kHugeHintFrom) (void)::madvise(const_cast<char*>(data_), size_, MADV_HUGEPAGE);
}

void MappedFile::WillNeed(std::string_view part) const {
  const auto base = reinterpret_cast<uintptr_t>(data_);
  auto begin = reinterpret_cast<uintptr_t>(part.data());
  if (!data_ || part.empty() || begin < base || part.size() > size_ - (begin - base)) return;
  const uintptr_t end = begin + part.size();
  // Rounded down within the map, which starts on a page.
  begin &= ~(static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)) - 1);
  (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace sluice

#include "base/file.h"
#include "base/page_cache_write.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
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

// A temporary's tag: one or more lower-case letters.
bool IsTempTag(std::string_view tag) {
  return !tag.empty() &&
         std::all_of(tag.begin(), tag.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}
constexpr size_t kTempBaseMax = 128;

// Start time of process `pid` in clock ticks after boot (field 22 of
// /proc/<pid>/stat, counted after the parenthesised command name, which may
// hold spaces), or nothing when unreadable.
// Field `n` (3 = state, 22 = start time) of /proc/<pid>/stat.
std::optional<std::string> ProcessStatField(uint32_t pid, int n) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  size_t close = s.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(s.substr(close + 1));
  std::string field;
  for (int i = 3; i <= n; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  return field;
}

std::optional<uint64_t> ProcessStart(uint32_t pid) {
  const std::optional<std::string> field = ProcessStatField(pid, 22);
  if (!field) return std::nullopt;
  uint64_t start = 0;
  auto [end, ec] = std::from_chars(field->data(), field->data() + field->size(), start);
  if (ec != std::errc() || end != field->data() + field->size()) return std::nullopt;
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
  // A zombie (killed, not yet reaped by its parent) writes nothing more.
  const std::optional<std::string> state = ProcessStatField(owner.pid, 3);
  if (state && (*state == "Z" || *state == "X")) return true;
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
  if (n == 4 && !IsTempTag(parts[3])) return std::nullopt;
  return out;
}

bool IsTempOfThisProcess(std::string_view path) {
  size_t slash = path.rfind('/');
  auto parsed = ParseTempName(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return parsed.has_value() && parsed->owner == ThisProcessTempOwner();
}

std::string TaggedTempPath(std::string_view temp_path, std::string_view tag) {
  assert(IsTempTag(tag));
  std::string out(temp_path);
  out += '.';
  out += tag;
  return out;
}

Result<TempFile> TempFile::Create(const std::string& final_path, Env* env, mode_t perms) {
  const OpenOptions options{perms, /*follow_links=*/false};
  if (IsTempOfThisProcess(final_path)) {
    SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(final_path, OpenMode::kWriteTruncate, options));
    return TempFile(env, final_path, final_path, std::move(fd));
  }
  // O_EXCL: a leftover of an earlier process with this pid and start time
  // (only possible when the start time is unknown) is never reused.
  for (int attempt = 0;; ++attempt) {
    std::string tmp = TempPathFor(final_path);
    Result<OwnedFd> fd = env->Open(tmp, OpenMode::kWriteNew, options);
    if (fd.ok()) return TempFile(env, std::move(tmp), final_path, std::move(fd).value());
    if (fd.status().os_error() != EEXIST || attempt == 16) return fd.status();
  }
}

TempFile::TempFile(TempFile&& other) noexcept
    : env_(other.env_),
      path_(std::move(other.path_)),
      final_path_(std::move(other.final_path_)),
      fd_(std::move(other.fd_)),
      done_(std::exchange(other.done_, true)) {}

Status WriteInPageCacheBlocks(TempFile& file, std::string_view data, uint64_t* offset) {
  while (!data.empty()) {
    const uint64_t room = kPageCacheWriteBlock - *offset % kPageCacheWriteBlock;
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(room, data.size()));
    SLUICE_RETURN_IF_ERROR(file.Write(data.substr(0, piece)));
    *offset += piece;
    data.remove_prefix(piece);
  }
  return Status::Ok();
}

TempFile::~TempFile() {
  if (done_) return;
  fd_ = OwnedFd();
  (void)env_->Remove(path_);
}

Status TempFile::Commit() {
  if (done_) return InternalError("temporary " + path_ + " committed twice");
  Status st = fd_.Close(path_);
  if (st.ok() && path_ != final_path_) st = env_->Rename(path_, final_path_);
  if (!st.ok()) (void)env_->Remove(path_);
  done_ = true;
  return st;
}

Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(path, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(struct stat st, env->StatOpen(fd.get(), path));
  if (S_ISDIR(st.st_mode)) return IoError(path + " is a folder, expected a file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return OutOfRangeError(path + ": file has " + std::to_string(size) +
                           " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::string out(size, '\0');
  // A file that shrank under us is read to its new end.
  SLUICE_ASSIGN_OR_RETURN(size_t got, env->PReadFull(fd.get(), path, out.data(), size, 0));
  out.resize(got);
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view data, Env* env, mode_t perms) {
  SLUICE_ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(path, env, perms));
  SLUICE_RETURN_IF_ERROR(tmp.Write(data));
  return tmp.Commit();
}

Result<uint64_t> CopyFileAtomic(const std::string& from, const std::string& to, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(OwnedFd in, env->Open(from, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(TempFile out, TempFile::Create(to, env));
  // Read in large pieces, write in kPageCacheWriteBlock pieces at aligned
  // offsets (see kPageCacheWriteBlock for why).
  constexpr size_t kReadBytes = size_t{1} << 20;
  std::string buf(kReadBytes, '\0');
  uint64_t total = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, env->Read(in.get(), from, buf.data(), buf.size()));
    if (n == 0) break;
    SLUICE_RETURN_IF_ERROR(WriteInPageCacheBlocks(out, std::string_view(buf.data(), n), &total));
  }
  SLUICE_RETURN_IF_ERROR(out.Commit());
  return total;
}

Status TouchFile(int fd, std::string_view path, Env* env) { return env->Touch(fd, path); }

Result<uint64_t> FileSize(const std::string& path, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(struct stat st, env->Stat(path));
  return static_cast<uint64_t>(st.st_size);
}

bool FileExists(const std::string& path, Env* env) { return env->Stat(path).ok(); }

Status MakeDirs(const std::string& path, Env* env) {
  if (path.empty()) return Status::Ok();
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string cur = path.substr(0, next);
    if (!cur.empty()) SLUICE_RETURN_IF_ERROR(env->MakeFolder(cur));
    pos = next + 1;
  }
  return Status::Ok();
}

void JoinPathInto(std::string* out, std::string_view dir, std::string_view name) {
  out->clear();
  if (dir.empty()) {
    out->append(name);
    return;
  }
  out->reserve(dir.size() + 1 + name.size());
  out->append(dir);
  if (dir.back() != '/') out->push_back('/');
  out->append(name);
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string out;  // one allocation: the '/' and name grew it twice
  JoinPathInto(&out, dir, name);
  return out;
}

// ------------------------------------------------------ confined folders

Result<ConfinedDir> ConfinedDir::Open(const std::string& root, Env* env) {
  ConfinedDir d;
  d.env_ = env;
  d.root_ = root;
  SLUICE_ASSIGN_OR_RETURN(d.fd_, env->OpenFolder(root));
  return d;
}

std::string ConfinedDir::PathOf(std::string_view rel) const {
  return rel.empty() ? root_ : JoinPath(root_, rel);
}

Result<OwnedFd> ConfinedDir::OpenFolder(std::string_view rel, bool create) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> parts, Components(rel, root_));
  // A copy of the root's descriptor, not a new open of it: the walk starts
  // at the folder opened once, and a dup costs no path lookup.
  OwnedFd cur(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!cur.valid()) return ErrnoStatus("cannot open folder", root_, errno);
  // root_/part/part..., grown in place: one allocation for the walk.
  std::string whole;
  whole.reserve(root_.size() + 1 + rel.size());
  whole = root_;
  std::string name;
  for (std::string_view part : parts) {
    name.assign(part);
    if (whole.empty() || whole.back() != '/') whole += '/';
    whole += part;
    const FsPath here(cur.get(), name, whole);
    Result<OwnedFd> next = env_->OpenFolder(here, /*follow_links=*/false);
    if (!next.ok() && next.status().os_error() == ENOENT && create) {
      SLUICE_RETURN_IF_ERROR(env_->MakeFolder(here));
      next = env_->OpenFolder(here, /*follow_links=*/false);
    }
    if (!next.ok()) {
      const int err = next.status().os_error();
      if (err == ELOOP || err == ENOTDIR) {
        auto st = env_->Stat(here, /*follow_links=*/false);
        if (st.ok() && S_ISLNK(st->st_mode)) return LinkError(whole, root_);
      }
      return next.status();
    }
    cur = std::move(next).value();
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
  if (follow_links) return env_->Stat(PathOf(rel));
  SLUICE_ASSIGN_OR_RETURN(auto parent, Parent(rel, false));
  return env_->Stat(FsPath(parent.first.get(), parent.second, PathOf(rel)), false);
}

Result<OwnedFd> ConfinedDir::OpenFile(std::string_view rel, OpenMode mode) const {
  SLUICE_ASSIGN_OR_RETURN(auto parent, Parent(rel, false));
  Result<OwnedFd> fd = env_->Open(FsPath(parent.first.get(), parent.second, PathOf(rel)), mode,
                                  OpenOptions{kNewFileMode, /*follow_links=*/false});
  if (!fd.ok() && fd.status().os_error() == ELOOP) return LinkError(PathOf(rel), root_);
  return fd;
}

Status ConfinedDir::Rename(std::string_view from, std::string_view to) const {
  SLUICE_ASSIGN_OR_RETURN(auto src, Parent(from, false));
  SLUICE_ASSIGN_OR_RETURN(auto dst, Parent(to, false));
  return env_->Rename(FsPath(src.first.get(), src.second, PathOf(from)),
                      FsPath(dst.first.get(), dst.second, PathOf(to)));
}

Status ConfinedDir::Remove(std::string_view rel) const {
  auto parent = Parent(rel, false);
  if (!parent.ok()) {
    return parent.status().code() == StatusCode::kNotFound ? Status::Ok() : parent.status();
  }
  Status st = env_->Remove(FsPath(parent->first.get(), parent->second, PathOf(rel)));
  return st.os_error() == ENOENT ? Status::Ok() : st;
}

size_t ConfinedDir::SweepDeadTemps(std::string_view rel) const {
  auto folder = OpenFolder(rel, false);
  if (!folder.ok()) return 0;
  const int dir_fd = folder->get();
  auto names = env_->ListFolder(FsPath(dir_fd, ".", PathOf(rel)));
  if (!names.ok()) return 0;
  std::map<std::pair<uint32_t, uint64_t>, bool> gone;  // one /proc read per owner
  size_t removed = 0;
  for (std::string& name : *names) {
    std::optional<TempName> t = ParseTempName(name);
    if (!t) continue;
    auto [it, fresh] = gone.try_emplace({t->owner.pid, t->owner.start}, false);
    if (fresh) it->second = TempOwnerGone(t->owner);
    if (!it->second) continue;
    if (env_->Remove(FsPath(dir_fd, name, PathOf(JoinPath(rel, name)))).ok()) ++removed;
  }
  return removed;
}

}  // namespace sluice

#include "tests/base/fault_env.h"

#include <fnmatch.h>

#include <algorithm>

namespace sluice::testing {
namespace {

bool Matches(const std::string& pattern, std::string_view path) {
  return !path.empty() && ::fnmatch(pattern.c_str(), std::string(path).c_str(), 0) == 0;
}

}  // namespace

void FaultEnv::Add(FsFault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.push_back({std::move(fault), 0});
}

void FaultEnv::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_.clear();
}

int FaultEnv::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

std::string FaultEnv::last_fired_path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_fired_path_;
}

std::optional<FsFault> FaultEnv::Hit(FsOp op, std::string_view path, std::string_view other) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<FsFault> hit;
  for (Armed& a : armed_) {
    if (a.fault.op != op) continue;
    if (!Matches(a.fault.path_pattern, path) && !Matches(a.fault.path_pattern, other)) continue;
    const int n = ++a.seen;
    const bool in_window =
        n >= a.fault.nth && (a.fault.times == 0 || n < a.fault.nth + a.fault.times);
    if (in_window && !hit) hit = a.fault;
  }
  if (hit) {
    ++fired_;
    last_fired_path_ = std::string(path);
  }
  return hit;
}

Result<OwnedFd> FaultEnv::Open(const FsPath& file, OpenMode mode, const OpenOptions& options) {
  if (auto f = Hit(FsOp::kOpen, file.path)) {
    const bool creates = mode == OpenMode::kWriteTruncate || mode == OpenMode::kWriteNew;
    return ErrnoStatus(creates ? "cannot create" : "cannot open", file.path, f->err);
  }
  return ForwardingEnv::Open(file, mode, options);
}

Result<size_t> FaultEnv::Read(int fd, std::string_view path, char* buf, size_t size) {
  if (auto f = Hit(FsOp::kRead, path)) return ErrnoStatus("cannot read", path, f->err);
  return ForwardingEnv::Read(fd, path, buf, size);
}

Result<size_t> FaultEnv::PRead(int fd, std::string_view path, char* buf, size_t size,
                               uint64_t offset) {
  if (auto f = Hit(FsOp::kRead, path)) return ErrnoStatus("cannot read", path, f->err);
  return ForwardingEnv::PRead(fd, path, buf, size, offset);
}

Result<size_t> FaultEnv::Write(int fd, std::string_view path, std::string_view data) {
  if (auto f = Hit(FsOp::kWrite, path)) {
    if (!f->short_write) return ErrnoStatus("cannot write", path, f->err);
    data = data.substr(0, std::min(f->short_bytes, data.size() > 0 ? data.size() - 1 : 0));
  }
  return ForwardingEnv::Write(fd, path, data);
}

Result<size_t> FaultEnv::PWrite(int fd, std::string_view path, std::string_view data,
                                uint64_t offset) {
  if (auto f = Hit(FsOp::kWrite, path)) {
    if (!f->short_write) return ErrnoStatus("cannot write", path, f->err);
    data = data.substr(0, std::min(f->short_bytes, data.size() > 0 ? data.size() - 1 : 0));
  }
  return ForwardingEnv::PWrite(fd, path, data, offset);
}

Status FaultEnv::Sync(int fd, std::string_view path, bool data_only) {
  if (auto f = Hit(FsOp::kSync, path)) return ErrnoStatus("cannot sync", path, f->err);
  return ForwardingEnv::Sync(fd, path, data_only);
}

Status FaultEnv::Truncate(int fd, std::string_view path, uint64_t size) {
  if (auto f = Hit(FsOp::kTruncate, path)) {
    return ErrnoStatus("cannot truncate", path, f->err);
  }
  return ForwardingEnv::Truncate(fd, path, size);
}

Result<struct stat> FaultEnv::StatOpen(int fd, std::string_view path) {
  if (auto f = Hit(FsOp::kStat, path)) return ErrnoStatus("cannot stat", path, f->err);
  return ForwardingEnv::StatOpen(fd, path);
}

Status FaultEnv::Touch(int fd, std::string_view path) {
  if (auto f = Hit(FsOp::kTouch, path)) return ErrnoStatus("cannot touch", path, f->err);
  return ForwardingEnv::Touch(fd, path);
}

Result<MappedFile> FaultEnv::Map(int fd, std::string_view path) {
  if (auto f = Hit(FsOp::kMap, path)) return ErrnoStatus("cannot map", path, f->err);
  return ForwardingEnv::Map(fd, path);
}

Result<SharedMap> FaultEnv::MapShared(int fd, std::string_view path, uint64_t size) {
  if (auto f = Hit(FsOp::kMap, path)) return ErrnoStatus("cannot map", path, f->err);
  return ForwardingEnv::MapShared(fd, path, size);
}

Result<bool> FaultEnv::TryLockByte(int fd, std::string_view path, off_t byte, bool exclusive) {
  if (auto f = Hit(FsOp::kLock, path)) {
    return ErrnoStatus("cannot lock byte " + std::to_string(byte) + " of", path, f->err);
  }
  return ForwardingEnv::TryLockByte(fd, path, byte, exclusive);
}

Status FaultEnv::UnlockByte(int fd, std::string_view path, off_t byte) {
  if (auto f = Hit(FsOp::kLock, path)) {
    return ErrnoStatus("cannot unlock byte " + std::to_string(byte) + " of", path, f->err);
  }
  return ForwardingEnv::UnlockByte(fd, path, byte);
}

Result<struct stat> FaultEnv::Stat(const FsPath& file, bool follow_links) {
  if (auto f = Hit(FsOp::kStat, file.path)) {
    return ErrnoStatus("cannot stat", file.path, f->err);
  }
  return ForwardingEnv::Stat(file, follow_links);
}

Status FaultEnv::Rename(const FsPath& from, const FsPath& to) {
  if (auto f = Hit(FsOp::kRename, from.path, to.path)) {
    return ErrnoStatus("cannot rename " + std::string(from.path) + " onto", to.path, f->err);
  }
  return ForwardingEnv::Rename(from, to);
}

Status FaultEnv::Remove(const FsPath& file) {
  if (auto f = Hit(FsOp::kRemove, file.path)) {
    return ErrnoStatus("cannot delete", file.path, f->err);
  }
  return ForwardingEnv::Remove(file);
}

Status FaultEnv::MakeFolder(const FsPath& folder, mode_t perms) {
  if (auto f = Hit(FsOp::kMakeFolder, folder.path)) {
    return ErrnoStatus("cannot create folder", folder.path, f->err);
  }
  return ForwardingEnv::MakeFolder(folder, perms);
}

Result<OwnedFd> FaultEnv::OpenFolder(const FsPath& folder, bool follow_links) {
  if (auto f = Hit(FsOp::kOpenFolder, folder.path)) {
    return ErrnoStatus("cannot open folder", folder.path, f->err);
  }
  return ForwardingEnv::OpenFolder(folder, follow_links);
}

Result<std::vector<std::string>> FaultEnv::ListFolder(const FsPath& folder) {
  if (auto f = Hit(FsOp::kList, folder.path)) {
    return ErrnoStatus("cannot list", folder.path, f->err);
  }
  return ForwardingEnv::ListFolder(folder);
}

}  // namespace sluice::testing

#include "engine/cache/ofd_lock.h"

#include "engine/cache/fork_guard.h"

namespace sluice::cache_internal {

Result<LockFile> LockFile::Open(Env* env, const std::string& path) {
  // follow_links false: a link planted as the lock file is refused.
  SLUICE_ASSIGN_OR_RETURN(int fd, OpenRegistered(env, path, OpenMode::kReadWrite,
                                                 OpenOptions{0644, /*follow_links=*/false}));
  return LockFile(env, path, fd);
}

LockFile::LockFile(LockFile&& other) noexcept
    : env_(other.env_), path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

LockFile& LockFile::operator=(LockFile&& other) noexcept {
  if (this != &other) {
    CloseRegistered(fd_);
    env_ = other.env_;
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

LockFile::~LockFile() { CloseRegistered(fd_); }

Result<bool> TryLockByte(const LockFile& file, off_t byte, bool exclusive) {
  return file.env_->TryLockByte(file.fd_, file.path_, byte, exclusive);
}

Status UnlockByte(const LockFile& file, off_t byte) {
  return file.env_->UnlockByte(file.fd_, file.path_, byte);
}

}  // namespace sluice::cache_internal

#include "engine/cache/ofd_lock.h"

#include "engine/cache/fork_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice::cache_internal {
namespace {

struct flock ByteRange(short type, off_t byte) {
  struct flock fl;
  std::memset(&fl, 0, sizeof(fl));
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = byte;
  fl.l_len = 1;
  fl.l_pid = 0;  // must be 0 for OFD locks
  return fl;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    CloseRegistered(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() { CloseRegistered(fd_); }

Result<UniqueFd> OpenLockFile(const std::string& path) {
  // O_NOFOLLOW: a link planted as the lock file is refused, never followed.
  int fd = OpenRegistered(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return IoError("cannot open lock file " + path + ": " + std::strerror(errno));
  }
  return UniqueFd(fd);
}

Result<bool> TryLockByte(int fd, off_t byte, bool exclusive) {
  struct flock fl = ByteRange(exclusive ? F_WRLCK : F_RDLCK, byte);
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return false;
    return IoError("cannot lock byte " + std::to_string(byte) + " of the cache lock file: " +
                   std::strerror(errno));
  }
}

Status UnlockByte(int fd, off_t byte) {
  struct flock fl = ByteRange(F_UNLCK, byte);
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return Status::Ok();
    if (errno == EINTR) continue;
    return IoError("cannot unlock byte " + std::to_string(byte) + " of the cache lock file: " +
                   std::strerror(errno));
  }
}

}  // namespace sluice::cache_internal

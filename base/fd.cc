#include "base/fd.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace sluice {

Status ErrnoStatus(std::string_view what, std::string_view path, int err) {
  std::string msg = std::string(what) + " " + std::string(path) + ": " + std::strerror(err);
  StatusCode code = StatusCode::kIoError;
  if (err == ENOENT || err == ENOTDIR) code = StatusCode::kNotFound;
  if (err == EACCES || err == EPERM) code = StatusCode::kPermissionDenied;
  return Status(code, std::move(msg), err);
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

}  // namespace sluice

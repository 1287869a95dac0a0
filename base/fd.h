// The vocabulary of file-system calls: the errno-to-Status rule, the modes
// of what Sluice creates, and an owned file descriptor. base/env.h makes the
// calls; base/file.h builds on it. Thread-safe (no shared state).
#pragma once

#include <sys/types.h>

#include <string_view>

#include "base/status.h"

namespace sluice {

// "<what> <path>: <strerror(err)>" with the code errno implies: ENOENT and
// ENOTDIR kNotFound, EACCES and EPERM kPermissionDenied, anything else
// kIoError; `err` is kept as the status's os_error(). The project's one
// errno-to-Status rule.
Status ErrnoStatus(std::string_view what, std::string_view path, int err);

// Modes of what Sluice creates: files 0666 and folders 0777, both masked by
// the process's umask as cp, curl -o and Python's open() do (0644 and 0755
// under the usual umask 022, 0640 and 0750 under 027). Data files are never
// executable.
inline constexpr mode_t kNewFileMode = 0666;
inline constexpr mode_t kNewFolderMode = 0777;
// Files only their owner may read (credentials, a cache's state).
inline constexpr mode_t kOwnerOnlyFileMode = 0600;

// An owned file descriptor, closed on destruction. Move-only.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.Release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { int fd = fd_; fd_ = -1; return fd; }
  // Closes now; the close(2) error as ErrnoStatus("cannot close", path).
  Status Close(std::string_view path);

 private:
  int fd_ = -1;
};

}  // namespace sluice

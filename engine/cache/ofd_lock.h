// Byte-range locks on open file descriptions (Linux F_OFD_* fcntl locks).
//
// Why OFD locks: the kernel drops them when the last descriptor of the open
// file description closes, which includes the owning process being killed
// (SIGKILL included), so a lock is never stale. Unlike classic POSIX record
// locks they belong to the open file description, not the process: two
// descriptors from two open() calls conflict even inside one process, which
// is how threads of one process exclude each other. Two holders sharing one
// open file description (dup, fork) do NOT exclude each other.
//
// Every function here is thread-safe (no shared state). None blocks: waiting
// is done by callers that poll with a deadline, so every wait is bounded.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace sluice::cache_internal {

// An owned file descriptor, closed on destruction (through the fork guard's
// registry, see fork_guard.h). Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { int fd = fd_; fd_ = -1; return fd; }

 private:
  int fd_ = -1;
};

// Opens (creating if needed, mode 0644) `path` read-write with O_CLOEXEC and
// O_NOFOLLOW (a link as the lock file is refused): a new open file
// description, i.e. a new lock owner. Registered with the fork guard, so a
// forked child never holds its locks.
Result<UniqueFd> OpenLockFile(const std::string& path);

// Tries to take a shared (exclusive = false) or exclusive lock on byte
// `byte` through `fd`. True when taken; false when another open file
// description holds a conflicting lock. Re-locking through the same
// description converts the lock (it never conflicts with itself).
Result<bool> TryLockByte(int fd, off_t byte, bool exclusive);

// Releases whatever lock `fd`'s open file description holds on `byte`.
Status UnlockByte(int fd, off_t byte);

}  // namespace sluice::cache_internal

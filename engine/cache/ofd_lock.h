// Byte-range locks on open file descriptions (Linux F_OFD_* fcntl locks),
// taken through an Env (base/env.h), so a test double can fail them.
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

#include "base/env.h"
#include "base/status.h"

namespace sluice::cache_internal {

// A lock file open through its own open file description (a lock owner),
// closed on destruction through the fork guard's registry (fork_guard.h), so
// a forked child never holds its locks. Move-only.
class LockFile {
 public:
  // Opens (creating if needed, mode 0644) `path` read-write through `env`,
  // close-on-exec, refusing a symbolic link as the lock file (it is never
  // followed): a new open file description, i.e. a new lock owner.
  static Result<LockFile> Open(Env* env, const std::string& path);

  LockFile() = default;
  LockFile(LockFile&& other) noexcept;
  LockFile& operator=(LockFile&& other) noexcept;
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile();

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool valid() const { return fd_ >= 0; }

 private:
  LockFile(Env* env, std::string path, int fd) : env_(env), path_(std::move(path)), fd_(fd) {}
  friend Result<bool> TryLockByte(const LockFile& file, off_t byte, bool exclusive);
  friend Status UnlockByte(const LockFile& file, off_t byte);

  Env* env_ = nullptr;
  std::string path_;
  int fd_ = -1;
};

// Tries to take a shared (exclusive = false) or exclusive lock on byte
// `byte` through `file`. True when taken; false when another open file
// description holds a conflicting lock. Re-locking through the same
// description converts the lock (it never conflicts with itself).
Result<bool> TryLockByte(const LockFile& file, off_t byte, bool exclusive);

// Releases whatever lock `file`'s open file description holds on `byte`.
Status UnlockByte(const LockFile& file, off_t byte);

}  // namespace sluice::cache_internal

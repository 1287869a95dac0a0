// FaultEnv: a test double of Env (base/env.h) that forwards every call to a
// real Env (a ForwardingEnv) and fails the ones a test chose: the Nth call of a kind whose
// path matches a pattern fails with an errno (ENOSPC for a full disk, EIO,
// EXDEV for a rename, ...) or, for a write, writes only some of its bytes.
// The failure is the one the real Env would report for that errno (the same
// ErrnoStatus wording), and nothing reaches the file system for a failed
// call, as when the kernel refuses it.
//
// Thread-safe: faults may be added and calls made from any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/mapped_file.h"
#include "tests/base/forwarding_env.h"

namespace sluice::testing {

// The kinds of call a fault can target. kWrite covers Write and PWrite,
// kRead Read and PRead, kOpen files (not folders: kOpenFolder).
enum class FsOp {
  kOpen,
  kRead,
  kWrite,
  kSync,
  kTruncate,
  kStat,
  kTouch,
  kMap,  // Map and MapShared
  kRename,
  kRemove,
  kMakeFolder,
  kOpenFolder,
  kList,
  kLock,  // TryLockByte and UnlockByte
};

struct FsFault {
  FsOp op = FsOp::kWrite;
  // fnmatch(3) pattern over the whole path ('*' matches '/' too); a rename
  // matches when its source or its target does.
  std::string path_pattern = "*";
  // The first matching call that fails (1 = the first), counted from when
  // the fault was added...
  int nth = 1;
  // ...and how many matching calls in a row fail from there (0 = every one).
  int times = 1;
  // The errno of the failure.
  int err = EIO;
  // Writes only: instead of failing, write this many bytes (fewer than
  // asked) and report them, as a short write(2) does.
  bool short_write = false;
  size_t short_bytes = 0;
};

class FaultEnv final : public ForwardingEnv {
 public:
  explicit FaultEnv(Env* base = Env::Default()) : ForwardingEnv(base) {}

  void Add(FsFault fault);
  // Drops every fault (the disk has room again).
  void Clear();
  // How many calls have failed (or been cut short) so far.
  int fired() const;
  // The path of the last call that failed (for a rename, its source): lets
  // a test spell the exact error about a temporary whose name it cannot
  // know beforehand.
  std::string last_fired_path() const;

  Result<OwnedFd> Open(const FsPath& file, OpenMode mode,
                       const OpenOptions& options = {}) override;
  Result<size_t> Read(int fd, std::string_view path, char* buf, size_t size) override;
  Result<size_t> PRead(int fd, std::string_view path, char* buf, size_t size,
                       uint64_t offset) override;
  Result<size_t> Write(int fd, std::string_view path, std::string_view data) override;
  Result<size_t> PWrite(int fd, std::string_view path, std::string_view data,
                        uint64_t offset) override;
  Status Sync(int fd, std::string_view path, bool data_only = false) override;
  Status Truncate(int fd, std::string_view path, uint64_t size) override;
  Result<struct stat> StatOpen(int fd, std::string_view path) override;
  Status Touch(int fd, std::string_view path) override;
  Result<MappedFile> Map(int fd, std::string_view path) override;
  Result<SharedMap> MapShared(int fd, std::string_view path, uint64_t size) override;
  Result<bool> TryLockByte(int fd, std::string_view path, off_t byte, bool exclusive) override;
  Status UnlockByte(int fd, std::string_view path, off_t byte) override;
  Result<struct stat> Stat(const FsPath& file, bool follow_links = true) override;
  Status Rename(const FsPath& from, const FsPath& to) override;
  Status Remove(const FsPath& file) override;
  Status MakeFolder(const FsPath& folder, mode_t perms = kNewFolderMode) override;
  Result<OwnedFd> OpenFolder(const FsPath& folder, bool follow_links = true) override;
  Result<std::vector<std::string>> ListFolder(const FsPath& folder) override;

 private:
  struct Armed {
    FsFault fault;
    int seen = 0;  // matching calls so far
  };
  // The fault that hits this call, if any (counting it against every
  // matching fault).
  std::optional<FsFault> Hit(FsOp op, std::string_view path, std::string_view other = {});

  mutable std::mutex mu_;
  std::vector<Armed> armed_;
  int fired_ = 0;
  std::string last_fired_path_;
};

}  // namespace sluice::testing

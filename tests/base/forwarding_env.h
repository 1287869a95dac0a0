// ForwardingEnv: a test double's base that forwards every Env call
// (base/env.h) to a wrapped Env, so a double overrides only the calls it
// counts, stalls or fails and calls ForwardingEnv's for the rest.
//
// ForEachInFolder and ListFolderTyped are not forwarded: Env's defaults
// go through ListFolder, so a double that changes ListFolder changes them
// too (ListFolderTyped's types then unknown: a stat a name).
//
// The wrapped Env is not owned and must outlive this one. Thread-safe as
// the wrapped Env is; a double adds its own locking for its own state.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/mapped_file.h"

namespace sluice::testing {

class ForwardingEnv : public Env {
 public:
  explicit ForwardingEnv(Env* base = Env::Default()) : base_(base) {}

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

 protected:
  // The wrapped Env, for a double that calls it past its own overrides.
  Env* base() const { return base_; }

 private:
  Env* const base_;
};

}  // namespace sluice::testing

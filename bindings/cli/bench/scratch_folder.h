// A private folder under $TMPDIR (or /tmp) for one bench call, removed with
// everything in it when the ScratchFolder is destroyed. (The CLI's own
// TempFolder also removes it on SIGINT/SIGTERM; the rig is a library call and
// installs no signal handler.) Movable, not copyable; path() is immutable.
#pragma once

#include <string>

#include "base/status.h"

namespace sluice::bench {

class ScratchFolder {
 public:
  // kIoError naming the template when the folder cannot be created.
  static Result<ScratchFolder> Create(const std::string& prefix);
  ScratchFolder(ScratchFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchFolder& operator=(ScratchFolder&&) = delete;
  ~ScratchFolder();
  const std::string& path() const { return path_; }

 private:
  explicit ScratchFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace sluice::bench

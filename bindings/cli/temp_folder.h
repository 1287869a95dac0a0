// A private temporary folder (mode 0700, under $TMPDIR or /tmp) that is
// deleted with everything in it when the TempFolder is destroyed, or when
// the process is ended by SIGINT, SIGTERM or SIGHUP (Create() installs
// handlers for those that remove the live folders and then end the process
// as the signal would). Used by the commands that work on a remote dataset
// through a local copy. Create and destroy from any thread; path() is
// immutable.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace sluice::cli {

class TempFolder {
 public:
  // kIoError naming the parent folder when it cannot be created.
  static Result<std::unique_ptr<TempFolder>> Create();
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit TempFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
  int signal_slot_ = -1;  // this folder's entry for the signal handler
};

}  // namespace sluice::cli

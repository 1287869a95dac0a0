// A private temporary folder (mode 0700, under $TMPDIR or /tmp) that is
// deleted with everything in it when the TempFolder is destroyed. Used by
// the commands that work on a remote dataset through a local copy.
// Not thread-safe to create or destroy; path() may be read from any thread.
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
};

}  // namespace sluice::cli

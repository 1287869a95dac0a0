// The tests' one temporary folder: a fresh empty folder under the system's
// temporary folder (TMPDIR, else /tmp) named <prefix>_XXXXXX, removed with
// everything in it when the object is destroyed in the process that made it
// (a forked child leaves it to its parent). A test that cannot get one stops
// there (abort), since nothing after it could mean anything.
// Header-only, so every test executable can use it; not thread-safe.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "sluice_test") : owner_(::getpid()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "_XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror(("mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path_ = tmpl;
  }
  ~TempDir() {
    if (::getpid() != owner_) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  pid_t owner_;
  std::string path_;
};

// Every name in `folder`, sorted bytewise (hidden temporaries included).
inline std::vector<std::string> NamesIn(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sluice::testing

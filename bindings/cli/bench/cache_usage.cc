#include "bindings/cli/bench/cache_usage.h"

#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <utility>

namespace sluice::bench {

uint64_t CachedBytes(const std::string& folder) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == ".sluice") {  // the cache's locks and shared state
      it.disable_recursion_pending();
      continue;
    }
    if (p.filename() == "index.json") continue;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // gone meanwhile
    if (!seen.insert({st.st_dev, st.st_ino}).second) continue;           // renamed during the walk
    total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace sluice::bench

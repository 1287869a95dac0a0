#include "bindings/cli/bench/cache_usage.h"

#include <filesystem>

namespace sluice::bench {

uint64_t CachedBytes(const std::string& folder) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == ".sluice") {  // the cache's locks and shared state
      it.disable_recursion_pending();
      continue;
    }
    if (p.filename() == "index.json" || !it->is_regular_file(ec)) continue;
    uint64_t size = it->file_size(ec);
    if (!ec) total += size;  // a file renamed or evicted meanwhile counts nothing
    ec.clear();
  }
  return total;
}

}  // namespace sluice::bench

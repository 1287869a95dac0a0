#include "bindings/cli/bench/cache_usage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <tuple>

namespace sluice::bench {
namespace {

// A file's identity across two walks: the birth time tells a new file from
// an evicted one whose inode number it reuses.
using FileId = std::tuple<dev_t, ino_t, int64_t, uint32_t>;
using Sizes = std::map<FileId, uint64_t>;

bool IsCounted(const std::string& name) {
  // index.json and its download temporary (".index.json" + base/file.h's
  // temporary marker) are metadata, not budgeted files.
  return name != "index.json" && name.rfind(".index.json", 0) != 0;
}

void Walk(const std::string& folder, Sizes* out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == ".sluice") {  // the cache's locks and shared state
      it.disable_recursion_pending();
      continue;
    }
    if (!IsCounted(p.filename().string())) continue;
    struct statx st;
    if (::statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0 ||
        !S_ISREG(st.stx_mode)) {
      continue;  // gone meanwhile, or not a file
    }
    const bool born = (st.stx_mask & STATX_BTIME) != 0;
    FileId id{makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino, born ? st.stx_btime.tv_sec : 0,
              born ? st.stx_btime.tv_nsec : 0};
    // emplace keeps the first size: a file renamed during the walk counts once.
    out->emplace(id, st.stx_size);
  }
}

}  // namespace

uint64_t CachedBytes(const std::string& folder) {
  Sizes sizes;
  Walk(folder, &sizes);
  uint64_t total = 0;
  for (const auto& [id, size] : sizes) total += size;
  return total;
}

uint64_t CachedBytesAtOneInstant(const std::vector<std::string>& folders) {
  Sizes first, second;
  for (const std::string& f : folders) Walk(f, &first);
  for (const std::string& f : folders) Walk(f, &second);
  uint64_t total = 0;
  for (const auto& [id, size] : first) {
    auto again = second.find(id);
    if (again != second.end()) total += std::min(size, again->second);
  }
  return total;
}

}  // namespace sluice::bench

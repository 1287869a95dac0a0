#include "stores/common/tree_listing.h"

#include <algorithm>
#include <utility>

#include "base/asio/co_status.h"
#include "stores/common/object_listing.h"
#include "stores/common/part_uploads.h"

namespace sluice {

using boost::asio::awaitable;

awaitable<Result<std::vector<ObjectInfo>>> ListTree(std::string prefix, int concurrency,
                                                    size_t min_keys_per_folder,
                                                    ListSequence list) {
  std::vector<ObjectInfo> out;
  std::vector<std::string> folders;
  constexpr int kMaxSingleFolderDepth = 8;
  for (int depth = 0;; ++depth) {
    folders.clear();
    SLUICE_CO_RETURN_IF_ERROR(co_await list(prefix, &out, &folders));
    // A sub-prefix may come on two pages (S3 continues after the last
    // object, and a folder can straddle that point).
    std::sort(folders.begin(), folders.end());
    folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
    if (folders.size() != 1 || !out.empty() || depth == kMaxSingleFolderDepth) break;
    prefix = std::move(folders.front());
  }
  if (folders.size() >= 2) {
    std::vector<std::vector<ObjectInfo>> listed(folders.size());
    SLUICE_CO_RETURN_IF_ERROR(co_await list(folders[0], &listed[0], nullptr));
    if (listed[0].size() < min_keys_per_folder) {
      // Small folders: the whole prefix as one plain sequence.
      std::vector<ObjectInfo> all;
      SLUICE_CO_RETURN_IF_ERROR(co_await list(prefix, &all, nullptr));
      SortByKey(&all);
      co_return all;
    }
    SLUICE_CO_RETURN_IF_ERROR(co_await ForEachPartConcurrently(
        folders.size() - 1, concurrency, [&](uint64_t i) -> awaitable<Status> {
          co_return co_await list(folders[i + 1], &listed[i + 1], nullptr);
        }));
    for (std::vector<ObjectInfo>& objects : listed) {
      for (ObjectInfo& object : objects) out.push_back(std::move(object));
    }
  } else if (folders.size() == 1) {
    SLUICE_CO_RETURN_IF_ERROR(co_await list(folders[0], &out, nullptr));
  }
  SortByKey(&out);
  co_return out;
}

}  // namespace sluice

#include "stores/common/tree_listing.h"

#include <algorithm>
#include <utility>

#include "base/asio/co_status.h"
#include "stores/common/object_listing.h"
#include "stores/common/part_uploads.h"

namespace sluice {

using boost::asio::awaitable;

// Levels of delimited listings before the folders found are listed plainly.
constexpr int kMaxDelimitedDepth = 4;

awaitable<Result<std::vector<ObjectInfo>>> ListTree(std::string prefix, int concurrency,
                                                    size_t min_keys_per_folder,
                                                    ListSequence list) {
  std::vector<ObjectInfo> out;
  // Delimited listings, a level at a time (its folders concurrently), until
  // a level has enough folders to keep `concurrency` sequences busy.
  std::vector<std::string> folders = {prefix};
  for (int depth = 0; depth < kMaxDelimitedDepth; ++depth) {
    std::vector<std::vector<ObjectInfo>> objects(folders.size());
    std::vector<std::vector<std::string>> subs(folders.size());
    SLUICE_CO_RETURN_IF_ERROR(co_await ForEachPartConcurrently(
        folders.size(), concurrency, [&](uint64_t i) -> awaitable<Status> {
          co_return co_await list(folders[i], &objects[i], &subs[i]);
        }));
    std::vector<std::string> next;
    for (size_t i = 0; i < folders.size(); ++i) {
      for (ObjectInfo& object : objects[i]) out.push_back(std::move(object));
      for (std::string& sub : subs[i]) next.push_back(std::move(sub));
    }
    // A sub-prefix may come on two pages (S3 continues after the last
    // object, and a folder can straddle that point).
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    folders = std::move(next);
    if (folders.empty() || folders.size() >= static_cast<size_t>(std::max(concurrency, 2))) break;
  }
  if (!folders.empty()) {
    std::vector<std::vector<ObjectInfo>> listed(folders.size());
    SLUICE_CO_RETURN_IF_ERROR(co_await list(folders[0], &listed[0], nullptr));
    if (folders.size() > 1 && listed[0].size() < min_keys_per_folder) {
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
  }
  SortByKey(&out);
  co_return out;
}

}  // namespace sluice

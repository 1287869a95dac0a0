// Lists a prefix of a store whose listing API pages one sequence at a time
// (S3's continuation token, Azure's marker), with several sequences in
// flight: a delimited listing finds the prefix's sub-prefixes ("folders"),
// and each is then listed on its own, `concurrency` at once. A dataset laid
// out in folders of many files (train/<class>/<file>) lists in about
// 1/concurrency of the round trips of one paged sequence; a flat folder, or
// folders of a few files each, cost one or two round trips more than it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Listings in flight at once for one List call (each on its own connection).
inline constexpr int kConcurrentListings = 16;
// Listing folder by folder pays when a folder fills more than its share of
// a page (`page_size` keys: 1,000 for S3, 5,000 for Azure): with fewer keys
// in the first folder, one plain sequence is fewer round trips.
inline constexpr size_t MinKeysPerFolderToFanOut(size_t page_size) {
  return page_size / kConcurrentListings;
}

// One paged listing of the keys starting with `prefix` (relative to the
// store's root), appended to *objects. With `sub_prefixes` non-null it is a
// delimited listing ('/'): *objects gets only the keys with no '/' after the
// prefix, and *sub_prefixes the prefixes (ending in '/') of the others.
using ListSequence = std::function<boost::asio::awaitable<Status>(
    const std::string& prefix, std::vector<ObjectInfo>* objects,
    std::vector<std::string>* sub_prefixes)>;

// Every key starting with `prefix`, sorted (Store::List's answer), through
// `list`. Descends through a prefix holding a single sub-prefix and nothing
// else (up to 8 levels) so that a root with one folder still fans out. Of
// two or more folders the first is listed alone; when it holds fewer than
// `min_keys_per_folder` keys the rest is one plain sequence, else the other
// folders are listed `concurrency` at once. The first error is returned.
// `list` is called on the caller's executor; it must stay callable until
// the returned awaitable completes.
boost::asio::awaitable<Result<std::vector<ObjectInfo>>> ListTree(std::string prefix,
                                                                 int concurrency,
                                                                 size_t min_keys_per_folder,
                                                                 ListSequence list);

}  // namespace sluice

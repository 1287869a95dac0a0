// Lists a prefix of a store whose listing API pages one sequence at a time
// (S3's continuation token, Azure's marker), with several sequences in
// flight: a delimited listing finds the prefix's sub-prefixes ("folders"),
// and each is then listed on its own, `concurrency` at once. A dataset laid
// out in folders of many files (train/<class>/<file>) lists in about
// 1/concurrency of the round trips of one paged sequence; a flat folder, or
// folders of a few files each, cost a few round trips more than it.
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
// `list`. Delimited listings go down a level at a time (a level's folders
// `concurrency` at once, up to 4 levels) until a level holds at least
// `concurrency` folders, keeping the objects found on the way; so a root of
// index.json and train/ and val/ over class folders still fans out over the
// classes. Of the last level's folders the first is listed alone; when there
// are several and it holds fewer than `min_keys_per_folder` keys the whole
// prefix is one plain sequence instead, else the others are listed
// `concurrency` at once. The first error is returned. `list` is called on
// the caller's executor; it must stay callable until the returned awaitable
// completes.
boost::asio::awaitable<Result<std::vector<ObjectInfo>>> ListTree(std::string prefix,
                                                                 int concurrency,
                                                                 size_t min_keys_per_folder,
                                                                 ListSequence list);

}  // namespace sluice

// Lists a prefix of a store whose listing API pages one sequence at a time
// (S3's continuation token, Azure's marker), with several sequences in
// flight: a delimited listing finds the prefix's sub-prefixes ("folders"),
// and each is then listed on its own, `concurrency` at once. A dataset laid
// out in folders (train/<class>/<file>) lists in about 1/concurrency of the
// round trips of one paged sequence; a flat folder costs what it did.
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
// Sub-prefixes above which one plain sequence is used (ListTree).
inline constexpr size_t kMaxListingFanOut = 10000;

// One paged listing of the keys starting with `prefix` (relative to the
// store's root), appended to *objects. With `sub_prefixes` non-null it is a
// delimited listing ('/'): *objects gets only the keys with no '/' after the
// prefix, and *sub_prefixes the prefixes (ending in '/') of the others.
using ListSequence = std::function<boost::asio::awaitable<Status>(
    const std::string& prefix, std::vector<ObjectInfo>* objects,
    std::vector<std::string>* sub_prefixes)>;

// Every key starting with `prefix`, sorted (Store::List's answer), through
// `list`. Descends through a prefix holding a single sub-prefix and nothing
// else (up to 8 levels) so that a root with one folder still fans out; with
// more than `max_fan_out` sub-prefixes one plain sequence is cheaper than a
// listing per folder, and that is used. The first error is returned.
// `list` is called on the caller's executor; it must stay callable until
// the returned awaitable completes.
boost::asio::awaitable<Result<std::vector<ObjectInfo>>> ListTree(std::string prefix,
                                                                 int concurrency,
                                                                 size_t max_fan_out,
                                                                 ListSequence list);

}  // namespace sluice

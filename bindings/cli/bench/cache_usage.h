// How many bytes a cache folder holds: the shard (or raw) files and those
// being written under temporary names (the cache budgets both under
// cache_limit), not index.json nor the cache's own state folder. Reads the
// folder only; safe while other processes write it.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::bench {

// One walk of `folder` (0 when it does not exist yet). Each file counts once
// even when it is renamed from its temporary name during the walk, and a
// file evicted meanwhile counts nothing. A walk is not a snapshot: a file
// evicted after it was counted and one written later both count.
uint64_t CachedBytes(const std::string& folder);

}  // namespace sluice::bench

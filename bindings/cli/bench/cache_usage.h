// How many bytes a cache folder holds: the shard (or raw) files and those
// being written under temporary names, not index.json nor the cache's own
// state folder. Reads the folder only; safe while other processes write it.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::bench {

struct CacheUse {
  uint64_t cached = 0;     // what counts against cache_limit
  uint64_t transient = 0;  // compressed downloads (*.tmp.*.zip) being decompressed
};

// One walk of `folder` (all 0 when it does not exist yet). Each file counts
// once even when it is renamed from its temporary name during the walk, and
// a file evicted meanwhile counts nothing.
CacheUse MeasureCacheUse(const std::string& folder);

// Everything MeasureCacheUse finds, cached and transient.
uint64_t CachedBytes(const std::string& folder);

}  // namespace sluice::bench

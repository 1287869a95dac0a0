// How many bytes a cache folder holds: the shard files (and shards being
// written under temporary names), not index.json nor the cache's own state
// folder. Reads the folder only; safe while other processes write it.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::bench {

// 0 when the folder does not exist (yet).
uint64_t CachedBytes(const std::string& folder);

}  // namespace sluice::bench

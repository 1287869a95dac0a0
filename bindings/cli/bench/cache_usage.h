// How many bytes cache folders hold: the shard (or raw) files and those being
// written under temporary names (the cache budgets both under cache_limit),
// not index.json, its download temporary, nor the cache's own state folder.
// Reads the folders only; safe while other processes write them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::bench {

// One walk of `folder` (0 when it does not exist yet). Each file counts once
// even when it is renamed from its temporary name during the walk, and a
// file evicted meanwhile counts nothing. A walk is not a snapshot: a file
// evicted after it was counted and one written later both count, so under
// churn the total can exceed what the folder ever held at once.
uint64_t CachedBytes(const std::string& folder);

// A lower bound of what `folders` held together at one instant, for checking
// a limit while other processes fill and evict them: two walks in a row, and
// only the files both saw (the same file by device, inode and birth time, at
// the smaller of its two sizes) count. Each such file existed from its visit
// in the first walk to its visit in the second, so all of them coexisted when
// the first walk ended. Where the file system keeps no birth time, an inode
// freed and reused between the walks could count once.
uint64_t CachedBytesAtOneInstant(const std::vector<std::string>& folders);

}  // namespace sluice::bench

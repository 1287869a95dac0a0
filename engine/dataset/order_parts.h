// A whole plan (a pass not in windows) goes to the prefetcher's schedule in
// parts of kOrderPartPositions positions, each located (its shards) when
// the schedule first needs it: the first part before the pass's first
// sample, the rest as the prefetcher or the consumer reaches them
// (IterationCursor::StartPrefetcher). A resumption half way through a
// million-row epoch spent 30M instructions locating and scheduling the
// 500,000 positions left before its first row (30M of its MDS twin's 34M:
// BENCHMARKS.md, issue 35). The decisions are the same either way
// (PrefetchSchedule's parts).
#pragma once

#include <cstddef>
#include <functional>

namespace sluice {

inline constexpr size_t kOrderPartPositions = size_t{1} << 14;

// Tests only: the part size (0 counts as 1), and a call for every part
// located (its first position and size; on the consumer's thread or a
// prefetch thread, one call at a time). Set while no pass runs;
// kOrderPartPositions and null restore the default.
void SetOrderPartsForTesting(size_t positions,
                             std::function<void(size_t begin, size_t count)> on_part);

}  // namespace sluice

// Internal: one function per shuffle algorithm, and the span preparation that
// all but naive share. Arguments are validated by GetShuffle.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/planner/plan_cancel.h"
#include "engine/planner/spans.h"
#include "engine/random/numpy_random.h"

namespace sluice::planner {

// Unit spans shuffled with default_rng(seed), divided into C parts, and each
// part's span list shuffled with `ep` = default_rng(seed + epoch), which is
// returned in `ep` for the algorithm to continue with.
DividedSpans ShuffledParts(std::span<const int64_t> units, int64_t num_canonical_nodes, uint64_t seed,
                           numpy::Generator& ep);

// GetShuffle's argument checks (Mosaic's errors); the number of ids.
Result<int64_t> CheckShuffleArgs(std::span<const int64_t> units, int64_t num_canonical_nodes, int64_t block_size);

// [int(0.75 * block), int(1.25 * block)), as Mosaic computes them.
struct BlockRange {
  int64_t lo, hi;
};
BlockRange BlockBounds(int64_t block_size);

// Converts numpy's integers() failure into Mosaic's ValueError.
Status IntegersError(int64_t low, int64_t high);

std::vector<int64_t> ShuffleNaive(int64_t n, uint64_t seed, uint64_t epoch);
std::vector<int64_t> ShufflePy1s(std::span<const int64_t> units, int64_t C, uint64_t seed, uint64_t epoch);
// `cancel`: checked per canonical node (plan_cancel.h).
Result<std::vector<int64_t>> ShufflePy2s(std::span<const int64_t> units, int64_t C, uint64_t seed, uint64_t epoch,
                                         const std::atomic<bool>* cancel = nullptr);
Result<std::vector<int64_t>> ShufflePy1b(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block, const std::atomic<bool>* cancel = nullptr);
Result<std::vector<int64_t>> ShufflePy1br(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                          uint64_t epoch, int64_t block, const std::atomic<bool>* cancel = nullptr);
Result<std::vector<int64_t>> ShufflePy1e(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block);

}  // namespace sluice::planner

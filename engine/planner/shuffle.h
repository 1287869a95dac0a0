// Mosaic's get_shuffle: a permutation `perm` of the epoch's big ids, used as
// shuffled_big = perm[big]. Spec: tests/data/mosaic/README.md section 3.6.
// Pure functions, thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::planner {

enum class ShuffleAlgo { kNaive, kPy1b, kPy1br, kPy1e, kPy1s, kPy2s };

// "naive", "py1b", "py1br", "py1e", "py1s", "py2s"; anything else -> KeyError.
// (py1b is the algorithm Mosaic dropped in v0.11; kept as its README describes.)
Result<ShuffleAlgo> ParseShuffleAlgo(std::string_view name);
std::string_view ShuffleAlgoName(ShuffleAlgo algo);

// units: sizes of the shuffle units (shards, or resampled shard pieces), in
// order; their sum is the number of big ids. Errors are Mosaic's
// ("ValueError: ..."): a block size too small for py1br/py1e (empty integers
// range), a py1e canonical node without samples, non-positive sizes.
// `cancel` (plan_cancel.h) is checked per canonical node (naive: before
// and after its one permutation).
Result<std::vector<int64_t>> GetShuffle(ShuffleAlgo algo, std::span<const int64_t> units,
                                        int64_t num_canonical_nodes, uint64_t seed, uint64_t epoch,
                                        int64_t block_size, const std::atomic<bool>* cancel = nullptr);

}  // namespace sluice::planner

namespace sluice::planner {

// The permutation evaluated only where a caller needs it: for py1e and py1s
// only the canonical nodes (parts) that hold the requested positions are
// shuffled (the generator is merely advanced over the others), so memory is
// proportional to those parts, and py1e sorts only the span of each part
// between its first and last requested position (a resumed reader's tail);
// other algorithms compute the whole permutation.
class PartialShuffle {
 public:
  // perm[position]; position must lie between two requested positions of
  // one part (any requested one included).
  int64_t operator()(int64_t position) const;
  // Replaces each x != -1 in ids by perm[x].
  void Map(std::vector<int64_t>& ids) const;
  // Number of permutation entries held in memory.
  int64_t held() const;
  // py1e only: whether some span's random block came out smaller than the
  // span, in any part (shuffled or skipped): Mosaic's py1e then leaves that
  // span unshuffled and warns. False for the other algorithms.
  bool py1e_narrow_block() const { return py1e_narrow_block_; }

 private:
  friend Result<PartialShuffle> GetPartialShuffle(ShuffleAlgo, std::span<const int64_t>, int64_t, uint64_t,
                                                  uint64_t, int64_t, std::span<const int64_t>,
                                                  const std::atomic<bool>*);
  std::vector<int64_t> full_;                      // whole permutation, or empty
  std::vector<int64_t> part_begin_;                // C+1 positions
  std::vector<std::vector<int64_t>> parts_;        // computed parts only
  bool py1e_narrow_block_ = false;
};

// GetShuffle restricted to `positions` (-1 entries ignored). Same errors;
// `cancel` as GetShuffle's where the whole permutation is made.
Result<PartialShuffle> GetPartialShuffle(ShuffleAlgo algo, std::span<const int64_t> units, int64_t num_canonical_nodes,
                                         uint64_t seed, uint64_t epoch, int64_t block_size,
                                         std::span<const int64_t> positions,
                                         const std::atomic<bool>* cancel = nullptr);

}  // namespace sluice::planner

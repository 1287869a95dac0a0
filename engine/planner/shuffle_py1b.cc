// py1b (Mosaic < 0.11): each canonical node's spans laid out in order, then
// fixed-size blocks shuffled. No recorded vectors exist; README section 3.6.
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

Result<std::vector<int64_t>> ShufflePy1b(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block, const std::atomic<bool>* cancel) {
  if (block <= 0) return MosaicValueError("shuffle_block_size must be positive, got " + std::to_string(block));
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  int64_t total = 0;
  for (int64_t u : units) total += u;
  std::vector<int64_t> out(static_cast<size_t>(total));
  int64_t at = 0;
  for (int64_t i = 0; i < C; ++i) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    const int64_t ns = at;
    for (size_t k = parts.part_begin[size_t(i)]; k < parts.part_begin[size_t(i) + 1]; ++k)
      for (int64_t id = parts.spans[k].begin; id < parts.spans[k].end; ++id) out[size_t(at++)] = id;
    for (int64_t b = ns; b < at; b += block) {
      const int64_t e = std::min(b + block, at);
      ep.Shuffle(std::span<int64_t>(out.data() + b, size_t(e - b)));
    }
  }
  return out;
}

}  // namespace sluice::planner

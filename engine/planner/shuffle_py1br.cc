// py1br: each canonical node's spans laid out in order, then shuffled in
// blocks of random size with a random stagger. Blocks may overlap, as in Mosaic.
#include <algorithm>

#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

Result<std::vector<int64_t>> ShufflePy1br(std::span<const int64_t> units, int64_t C, uint64_t seed,
                                          uint64_t epoch, int64_t block, const std::atomic<bool>* cancel) {
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  const BlockRange br = BlockBounds(block);
  int64_t total = 0;
  for (int64_t u : units) total += u;
  std::vector<int64_t> out(static_cast<size_t>(total));
  auto stagger = ep.Integers(0, br.lo, size_t(C));
  if (!stagger.ok()) return IntegersError(0, br.lo);
  int64_t at = 0;
  std::vector<Span> blocks;
  for (int64_t i = 0; i < C; ++i) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    const int64_t ns = at;
    for (size_t k = parts.part_begin[size_t(i)]; k < parts.part_begin[size_t(i) + 1]; ++k)
      for (int64_t id = parts.spans[k].begin; id < parts.spans[k].end; ++id) out[size_t(at++)] = id;
    const int64_t ne = at;
    const int64_t s = (*stagger)[size_t(i)];
    blocks.clear();
    for (int64_t end = ns; end < ne;) {
      auto r = ep.Integers(br.lo, br.hi);
      if (!r.ok()) return IntegersError(br.lo, br.hi);
      const int64_t b0 = std::max(end - s, ns);
      const int64_t b1 = std::min(end + *r - s, ne);
      blocks.push_back({b0, b1});
      end += b1 - b0;
    }
    for (const Span& b : blocks) ep.Shuffle(std::span<int64_t>(out.data() + b.begin, size_t(b.size())));
  }
  return out;
}

}  // namespace sluice::planner

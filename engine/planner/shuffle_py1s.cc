// py1s: shuffled spans, each span's ids shuffled in place.
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

std::vector<int64_t> ShufflePy1s(std::span<const int64_t> units, int64_t C, uint64_t seed, uint64_t epoch) {
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  std::vector<int64_t> out;
  int64_t total = 0;
  for (int64_t u : units) total += u;
  out.resize(static_cast<size_t>(total));
  size_t at = 0;
  for (const Span& s : parts.spans) {
    int64_t* begin = out.data() + at;
    for (int64_t id = s.begin; id < s.end; ++id) out[at++] = id;
    ep.Shuffle(std::span<int64_t>(begin, static_cast<size_t>(s.size())));
  }
  return out;
}

}  // namespace sluice::planner

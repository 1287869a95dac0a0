#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

std::vector<int64_t> ShuffleNaive(int64_t n, uint64_t seed, uint64_t epoch) {
  return MakeRng(seed, epoch).Permutation(n);
}

}  // namespace sluice::planner

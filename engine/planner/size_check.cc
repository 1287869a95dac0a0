#include "engine/planner/size_check.h"

#include <string>

#include "engine/planner/mosaic_error.h"

namespace sluice::planner {

Status CheckProduct(std::initializer_list<int64_t> dims) {
  __int128 product = 1;
  for (int64_t d : dims) {
    if (d < 0) return MosaicValueError("negative dimension " + std::to_string(d));
    product *= d;
    if (product > kMaxPlanElements) {
      return MosaicValueError("plan too large: more than " + std::to_string(kMaxPlanElements) +
                              " sample ids");
    }
  }
  return Status::Ok();
}

Status CheckCanonicalNodes(int64_t c, int64_t n) {
  if (c > 4 * n + (int64_t{1} << 20)) {
    return MosaicValueError("num_canonical_nodes (" + std::to_string(c) + ") is far larger than the number of samples (" +
                            std::to_string(n) + ")");
  }
  return Status::Ok();
}

}  // namespace sluice::planner

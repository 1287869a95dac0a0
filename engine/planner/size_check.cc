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

}  // namespace sluice::planner

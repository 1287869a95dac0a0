// Internal: bounds on planner allocations, so a bad configuration errors out
// instead of allocating without limit.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "base/status.h"

namespace sluice::planner {

// The largest plan (elements of any one array) the planner will build: 2^36
// ids (512 GiB as int64), far beyond any real epoch and below int64 overflow.
inline constexpr int64_t kMaxPlanElements = int64_t{1} << 36;

// kInvalidArgument ("ValueError: ...") when the product of `dims` exceeds
// kMaxPlanElements or any factor is negative.
Status CheckProduct(std::initializer_list<int64_t> dims);

struct PartitionArgs;
Status CheckPartitionArgs(const PartitionArgs& args);
Status CheckResume(const PartitionArgs& args);

}  // namespace sluice::planner

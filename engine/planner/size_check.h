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

// Sluice's own bound (Mosaic has none): num_canonical_nodes may exceed the
// sample count (Mosaic then repeats samples), but not by so much that the
// plan's size is driven by it: C <= 4 * samples + 2^20.
Status CheckCanonicalNodes(int64_t num_canonical_nodes, int64_t num_samples);

struct PartitionArgs;
Status CheckPartitionArgs(const PartitionArgs& args);
Status CheckResume(const PartitionArgs& args);

}  // namespace sluice::planner

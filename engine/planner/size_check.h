// Bounds on planner allocations, so a bad configuration errors out instead
// of allocating without limit; CheckPlanMemory is also for the planner's
// callers that hold a plan (engine/dataset's passes).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

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

// The memory this process may use, in bytes: the least of the machine's
// physical memory, the cgroup's memory.max (v2) and RLIMIT_AS; 0 when none
// is known.
uint64_t ProcessMemoryLimit();
// Tests only: ProcessMemoryLimit returns `limit` from now on (0: the
// process's own again), so a check's boundary can be tested exactly.
void SetProcessMemoryLimitForTesting(uint64_t limit);

// kInvalidArgument, before anything is allocated, when `items` held at
// once at `bytes_each` exceed `limit` (0: no limit known): "<what> holds
// <items> <unit>s at once: about <bytes> bytes (<bytes_each> a <unit>),
// more than the <limit> bytes this process may use; <remedy>". A plan
// that would not fit fails here with what to do instead,
// not with a bare out of memory (or the kernel's OOM killer) half way.
Status CheckPlanMemory(std::string_view what, std::string_view unit, int64_t items, int64_t bytes_each,
                       uint64_t limit, std::string_view remedy);

struct PartitionArgs;
Status CheckPartitionArgs(const PartitionArgs& args);
Status CheckResume(const PartitionArgs& args);

}  // namespace sluice::planner

#include "engine/planner/work_array.h"

#include <sys/mman.h>

#include <cstdint>

namespace sluice::planner {

std::vector<int64_t> TraversalOrder(const WorkArray& work) {
  const auto [P, R, W, NB, B] = work.shape;
  std::vector<int64_t> out;
  out.reserve(work.ids.size());
  for (int64_t b = 0; b < NB; ++b)
    for (int64_t w = 0; w < W; ++w)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t r = 0; r < R; ++r) {
          const int64_t* row = work.ids.data() + work.Offset(p, r, w, b, 0);
          out.insert(out.end(), row, row + B);
        }
  return out;
}

std::vector<int64_t> FilledIds(size_t n, int64_t value) {
  std::vector<int64_t> ids;
  ids.reserve(n);
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (n * sizeof(int64_t) >= 2 * kHuge) {
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(ids.data()) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(ids.data() + n) & ~(kHuge - 1);
    // Advice only: on failure the pages are simply small.
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  ids.assign(n, value);
  return ids;
}

void MapThrough(std::vector<int64_t>& ids, const std::vector<int64_t>& table) {
  const int64_t* t = table.data();
  for (int64_t& x : ids) x = x < 0 ? x : t[x];
}

}  // namespace sluice::planner

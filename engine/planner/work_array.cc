#include "engine/planner/work_array.h"

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

void MapThrough(std::vector<int64_t>& ids, const std::vector<int64_t>& table) {
  const int64_t* t = table.data();
  for (int64_t& x : ids) x = x < 0 ? x : t[x];
}

}  // namespace sluice::planner

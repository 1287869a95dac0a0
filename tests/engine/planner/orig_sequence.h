// Test helper: the global sample sequence a work array deals under Mosaic's
// orig layout, so tests compare plans of different worlds as one sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/planner/plan.h"

namespace sluice::planner::testing {

// Inverts the dealing of the column-major sequence to nodes, ranks and
// workers: seq[k] with k = p + P*(r + R*q), q = the position in the rank.
// Returns the first `len` values (-2 where no slot holds position k).
inline std::vector<int64_t> OrigGlobalSequence(const WorkArray& x, int64_t len) {
  const auto [P, R, W, NB, B] = x.shape;
  std::vector<int64_t> seq(size_t(len), -2);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t b = 0; b < NB; ++b)
          for (int64_t s = 0; s < B; ++s) {
            const int64_t q = b * W * B + w * B + s;
            const int64_t k = p + P * (r + R * q);
            if (k < len) seq[size_t(k)] = x.At(p, r, w, b, s);
          }
  return seq;
}

}  // namespace sluice::planner::testing

// Internal: shard spans and Mosaic's divide_spans (README section 3.6).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sluice::planner {

struct Span {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Consecutive ranges of the given unit sizes (zero sizes included).
std::vector<Span> UnitSpans(std::span<const int64_t> units);

// The spans cut into `parts` parts at boundaries N*(i+1)//parts, where N is the
// spans' total size. part_begin has parts+1 entries: part i is
// spans[part_begin[i], part_begin[i+1]).
struct DividedSpans {
  std::vector<Span> spans;
  std::vector<size_t> part_begin;
};
DividedSpans DivideSpans(std::span<const Span> spans, int64_t parts);

}  // namespace sluice::planner

#include "engine/packing/row_bounds.h"

#include <algorithm>
#include <cassert>

namespace sluice {

int32_t RowBounds(std::span<const int32_t> segments, std::span<int32_t> bounds) {
  assert(bounds.size() == segments.size() + 1);
  int32_t pieces = 0;  // pieces whose start is written
  int32_t end = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i] == 0) break;  // padding: only after the last piece
    if (i == 0 || segments[i] != segments[i - 1]) bounds[pieces++] = static_cast<int32_t>(i);
    end = static_cast<int32_t>(i + 1);
  }
  bounds[pieces] = end;
  std::fill(bounds.begin() + pieces + 1, bounds.end(), end);
  return pieces;
}

}  // namespace sluice

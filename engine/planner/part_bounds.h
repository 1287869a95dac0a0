// Internal: the canonical nodes' ranges of shuffle positions (part i is
// [N*i // C, N*(i+1) // C), as Mosaic's divide_spans cuts them) and the part
// a position falls in. A plain value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace sluice::planner {

class PartBounds {
 public:
  PartBounds(int64_t total, int64_t C) : total_(total), C_(C), begin_(size_t(C) + 1) {
    for (int64_t i = 0; i <= C; ++i) begin_[size_t(i)] = int64_t(static_cast<__int128>(total) * i / C);
    fits_ = total == 0 || C <= std::numeric_limits<int64_t>::max() / total;
  }
  int64_t begin(int64_t i) const { return begin_[size_t(i)]; }
  int64_t size(int64_t i) const { return begin(i + 1) - begin(i); }
  int64_t Of(int64_t x) const {
    int64_t i;
    if (fits_) {
      i = x * C_ / total_;  // within one of the answer: the boundaries round down
    } else {
      i = int64_t(std::upper_bound(begin_.begin(), begin_.end(), x) - begin_.begin()) - 1;
    }
    while (i + 1 < C_ && begin(i + 1) <= x) ++i;
    while (i > 0 && begin(i) > x) --i;
    return i;
  }

 private:
  int64_t total_, C_;
  std::vector<int64_t> begin_;
  bool fits_ = true;
};

}  // namespace sluice::planner

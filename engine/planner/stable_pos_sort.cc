#include "engine/planner/stable_pos_sort.h"

namespace sluice::planner {

void StablePosSort::Sort(std::vector<PosId>& v) {
  if (v.size() < 2) return;
  double lo = v[0].pos, hi = v[0].pos;
  for (const PosId& e : v) {
    lo = std::min(lo, e.pos);
    hi = std::max(hi, e.pos);
  }
  // About one key per four entries over [lo, hi]: keys never need merging.
  const size_t keys = std::max<size_t>(1, v.size() / 4);
  const int shift = ShiftFor(keys);
  const size_t runs = ((keys - 1) >> shift) + 1;
  const double scale = hi > lo ? static_cast<double>(keys) / (hi - lo) : 0.0;
  auto key = [lo, scale, keys](double p) {
    const double k = (p - lo) * scale;  // >= 0, monotone in p
    return k >= static_cast<double>(keys - 1) ? keys - 1 : static_cast<size_t>(k);
  };
  // Level 1: v -> tmp_ by key >> shift; run_end_[r] is where run r ends.
  count_.assign(runs + 1, 0);
  for (const PosId& e : v) ++count_[(key(e.pos) >> shift) + 1];
  for (size_t r = 0; r < runs; ++r) count_[r + 1] += count_[r];
  tmp_.resize(v.size());
  for (const PosId& e : v) tmp_[count_[key(e.pos) >> shift]++] = e;
  run_end_.swap(count_);  // count_ is free again (a 2^32-entry run's)
  // Level 2: each run of tmp_ back into v by the rest of its key.
  const size_t width = size_t{1} << shift;
  size_t begin = 0;
  for (size_t r = 0; r < runs; ++r) {
    const size_t end = run_end_[r];
    const size_t base = r << shift;
    SortRun(tmp_.data() + begin, end - begin, v.data() + begin, width,
            [&key, base](double p) { return key(p) - base; });
    begin = end;
  }
}

}  // namespace sluice::planner

// Tijdeman's rule for the chairman assignment problem (R. Tijdeman, "The
// chairman assignment problem", Discrete Mathematics 32 (1980) 323-330) over
// the exact cumulative targets of a quantized mixture schedule: with n >= 2
// streams every count stays within 1 - 1/(2n - 2) samples of its target at
// every position (README.md, "Mixture schedules"). Internal to
// mixture_schedule.cc; a plain value, not thread-safe (one per sequencer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::planner {

class TijdemanDraw {
 public:
  // `at`: the points' positions (at[0] == 0, increasing); `share`: per point,
  // per stream, each point's shares summing to `scale`; `linear`: the shares
  // move linearly between points (else they hold to the next point).
  TijdemanDraw(const std::vector<int64_t>& at, const std::vector<std::vector<int64_t>>& share, int64_t scale,
               bool linear);
  // The stream of position `t` (0-based), `counts` being the draws before
  // it. Among the streams whose target after t + 1 samples exceeds their
  // count by at least 1/(2n - 2), the one whose target first reaches its
  // count + 1 - 1/(2n - 2) at or after t + 1; ties to the lowest index.
  int64_t Pick(int64_t t) const;
  // Stream `stream` now has `count` draws.
  void Drew(int64_t stream, int64_t count);

 private:
  // The smallest T >= 0 whose target of stream i is >= count + num / b_
  // (0 < num < b_); INT64_MAX when it never is.
  int64_t FirstReach(size_t i, int64_t count, int64_t num) const;
  // Whether the target of stream i at at_[k] + y is >= count + num / b_.
  bool Reaches(size_t i, size_t k, int64_t y, int64_t count, int64_t num) const;

  std::vector<int64_t> at_;
  std::vector<std::vector<int64_t>> share_;
  std::vector<std::vector<__int128>> twice_base_;  // per point, per stream: 2 * scale * target there
  __int128 scale_ = 1;
  bool linear_ = false;
  int64_t b_ = 1;                              // 2n - 2
  std::vector<int64_t> eligible_, deadline_;  // per stream: FirstReach at 1/b_ and 1 - 1/b_
};

}  // namespace sluice::planner

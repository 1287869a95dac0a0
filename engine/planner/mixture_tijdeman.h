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
  // Stream `stream` now has `count` draws (counts only grow).
  void Drew(int64_t stream, int64_t count);

 private:
  // Where one stream's target first reaches count + num / b_ (num is 1 for
  // eligibility, b_ - 1 for the deadline): segment k, offset y in it, and
  // d = 2 L scale * (target there - count) exactly (L: the segment's length
  // when linear, else 1). A count's threshold is never before the previous
  // count's, so the search moves forward from there.
  struct Track {
    size_t k = 0;
    int64_t y = 0;
    int64_t count = 0;
    __int128 d = 0;
    bool never = false;
  };
  struct Segment {
    int64_t span = 0;      // positions in it (INT64_MAX for the open last one)
    int64_t L = 1;         // the length in its target's formula
    bool linear = false;
    __int128 den = 0;      // 2 L scale: one sample of target
    __int128 reach[2]{};   // ceil(den * num / b_) for num = 1, b_ - 1: d's threshold
  };
  // Moves `track` (threshold num = which ? b_ - 1 : 1) to `count` and
  // returns its position (INT64_MAX when never reached).
  int64_t Advance(size_t i, Track& track, int64_t count, int which);
  // d at offset 0 of segment k for `count`.
  __int128 StartOf(size_t i, size_t k, int64_t count) const;

  std::vector<int64_t> at_;
  std::vector<std::vector<int64_t>> share_;
  std::vector<std::vector<__int128>> twice_base_;  // per point, per stream: 2 * scale * target there
  std::vector<Segment> seg_;
  int64_t b_ = 1;                              // 2n - 2
  std::vector<Track> track_;                   // per stream: eligibility, deadline
  std::vector<int64_t> eligible_, deadline_;  // per stream: the tracks' positions
};

}  // namespace sluice::planner

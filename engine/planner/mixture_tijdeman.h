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
  // `counts` (one per stream, or null for all zero): the draws so far, for a
  // draw resumed from a sequencer checkpoint. Each stream's thresholds
  // depend on its count alone, so the walkers are walked to them from the
  // start: the state the draws would have left.
  TijdemanDraw(const std::vector<int64_t>& at, const std::vector<std::vector<int64_t>>& share, int64_t scale,
               bool linear, const int64_t* counts = nullptr);
  // The stream of position `t` (0-based), `counts` being the draws before
  // it. Among the streams whose target after t + 1 samples exceeds their
  // count by at least 1/(2n - 2), the one whose target first reaches its
  // count + 1 - 1/(2n - 2) at or after t + 1; ties to the lowest index.
  int64_t Pick(int64_t t) const;
  // Stream `stream` now has `count` draws: one more than before.
  void Drew(int64_t stream, int64_t count);
  // With 2 streams, Pick(t) then Drew by a cheaper path, the same picks:
  // the thresholds 1/(2n - 2) and 1 - 1/(2n - 2) are both 1/2 and the
  // excesses sum to 1, so stream 0 is picked exactly when it is eligible;
  // only stream 0's walker is kept. Increments the picked stream's entry of
  // `counts` (two) and returns the stream.
  bool two_streams() const { return b_ == 2; }
  int64_t DrawOfTwo(int64_t t, int64_t* counts);

 private:
  // One stream's thresholds, in the order its target reaches them: count +
  // 1/b_ (eligible), count + 1 - 1/b_ (the deadline), then the next
  // count's. So one walker per stream moves forward only, from the last
  // threshold reached to the next; a draw moves it over one sample of
  // target. In segment k, at offset y: value = 2 L scale * target there (L
  // the segment's length when linear, else 1), step = the value's growth to
  // y + 1, goal = the threshold's value.
  struct Walker {
    size_t k = 0;
    int64_t y = 0;
    __int128 value = 0, step = 0, goal = 0;
    bool entered = true;   // goal is not yet in this segment's terms
    bool chained = false;  // on a step segment, 0 <= value - goal < step
    bool never = false;    // a goal the target never reaches
    // Chained: value - goal, the positions left in the segment (or before
    // INT64_MAX), and each hop's value over step (quotient, remainder).
    int64_t rest = 0, room = 0, quot[2]{}, rem[2]{}, hop[2]{};
    // On a linear segment: the step's growth per position, 2 (q1 - q0);
    // stepping: the goal is in this segment's terms.
    int64_t curve = 0;
    bool stepping = false;
  };
  struct Segment {
    int64_t span = 0;     // positions in it (INT64_MAX for the open last one)
    int64_t L = 1;        // the length in its targets' formula
    bool linear = false;
    __int128 den = 0;     // 2 L scale: one sample of target
    __int128 reach[2]{};  // ceil(den / b_), ceil(den (b_ - 1) / b_): the thresholds above count * den
    __int128 hop[2]{};    // to reach[0] from the last count's reach[1], to reach[1] from reach[0]
  };
  // Moves stream i's walker to the first position whose target reaches
  // count + (which ? 1 - 1/b_ : 1/b_); returns it (INT64_MAX: never).
  int64_t Walk(size_t i, int64_t count, int which);
  // A chained walker's next goal (hop h) by the quotients alone; false
  // (nothing moved) when it lies beyond the segment.
  bool Hop(Walker& w, int h);
  // A stepping walker's next goal (hop h) within a few positions; false
  // (nothing moved) when it lies further.
  bool Steps(Walker& w, int h);
  // Walker i at the start of segment k.
  void Enter(size_t i, size_t k);

  std::vector<int64_t> at_;
  std::vector<std::vector<int64_t>> share_;
  std::vector<std::vector<__int128>> twice_base_;  // per point, per stream: 2 * scale * target there
  std::vector<Segment> seg_;
  int64_t b_ = 1;  // 2n - 2
  std::vector<Walker> walker_;
  std::vector<int64_t> eligible_, deadline_;  // per stream: the positions of its count's thresholds
};

}  // namespace sluice::planner

// Tijdeman's draw. Each stream's thresholds depend on its own count alone
// and its target only grows, so one walker per stream moves forward from the
// threshold it last reached: on a step segment (or the open last one) by
// whole quotients kept as a running remainder (no division per draw), on a
// linear segment position by position (two 128-bit additions each) for up
// to kSteps positions, then by the quadratic's floating-point root settled
// by exact comparisons (the float only guesses). Exact integer arithmetic
// decides; a pick scans the streams.
#include "engine/planner/mixture_tijdeman.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sluice::planner {
namespace {

constexpr int64_t kNeverReached = std::numeric_limits<int64_t>::max();

// Positions a linear segment's walk steps one by one before it solves for
// the rest: a hop takes about 1 / the stream's share.
constexpr int kSteps = 32;

// ceil(num / den) for num >= 0, den > 0; 64-bit division when both fit.
__int128 CeilDivide(__int128 num, __int128 den) {
  constexpr __int128 kFits = std::numeric_limits<int64_t>::max();
  if (num <= kFits && den <= kFits) return (uint64_t(num) + uint64_t(den) - 1) / uint64_t(den);
  return (num + den - 1) / den;
}

// A guess's double, without the library's exact 128-bit conversion.
double Approx(__int128 v) { return double(int64_t(v >> 64)) * 0x1p64 + double(uint64_t(v)); }

// The least n in [1, room] with n A + n^2 s >= need (> 0), given that room's
// growth reaches it: the root's guess, then exact comparisons.
int64_t FirstGrowth(__int128 A, __int128 s, __int128 need, int64_t room) {
  const auto grow = [&](int64_t n) { return __int128(n) * A + __int128(n) * n * s; };
  const double a = Approx(A), r = Approx(need);
  const double root = std::sqrt(std::max(0.0, a * a + 4 * double(int64_t(s)) * r));
  const double guess = 2 * r / (a + root);
  const int64_t n = std::isfinite(guess) ? int64_t(std::clamp(std::ceil(guess), 1.0, double(room))) : room;
  int64_t below = 0, at_or_above = room;  // grow(below) < need <= grow(at_or_above)
  if (grow(n) >= need) {
    at_or_above = n;
    if (n - 1 > 0 && grow(n - 1) < need) below = n - 1;
  } else {
    below = n;
    if (n + 1 <= room && grow(n + 1) >= need) at_or_above = n + 1;
  }
  while (at_or_above - below > 1) {
    const int64_t mid = below + (at_or_above - below) / 2;
    (grow(mid) >= need ? at_or_above : below) = mid;
  }
  return at_or_above;
}

}  // namespace

TijdemanDraw::TijdemanDraw(const std::vector<int64_t>& at, const std::vector<std::vector<int64_t>>& share,
                           int64_t scale, bool linear, const int64_t* counts)
    : at_(at), share_(share) {
  const size_t S = share_.empty() ? 0 : share_[0].size();
  b_ = S >= 2 ? 2 * int64_t(S) - 2 : 1;
  twice_base_.assign(at_.size(), std::vector<__int128>(S, 0));
  for (size_t k = 1; k < at_.size(); ++k) {
    const __int128 L = at_[k] - at_[k - 1];
    for (size_t i = 0; i < S; ++i) {
      twice_base_[k][i] = twice_base_[k - 1][i] + (linear ? L * (__int128(share_[k - 1][i]) + share_[k][i])
                                                          : 2 * L * share_[k - 1][i]);
    }
  }
  seg_.resize(at_.size());
  for (size_t k = 0; k < at_.size(); ++k) {
    Segment& g = seg_[k];
    const bool last = k + 1 == at_.size();
    g.span = last ? kNeverReached : at_[k + 1] - at_[k];
    g.linear = linear && !last;
    g.L = g.linear ? g.span : 1;
    g.den = 2 * __int128(g.L) * scale;
    g.reach[0] = CeilDivide(g.den, b_);
    g.reach[1] = CeilDivide(g.den * (b_ - 1), b_);
    g.hop[0] = g.den + g.reach[0] - g.reach[1];
    g.hop[1] = g.reach[1] - g.reach[0];
  }
  walker_.assign(S, Walker{});
  eligible_.assign(S, 0);
  deadline_.assign(S, 0);
  if (b_ == 1) return;  // one stream: always it
  for (size_t i = 0; i < S; ++i) {
    const int64_t count = counts ? counts[i] : 0;
    Enter(i, 0);
    eligible_[i] = Walk(i, count, 0);
    deadline_[i] = Walk(i, count, 1);
  }
}

int64_t TijdemanDraw::DrawOfTwo(int64_t t, int64_t* counts) {
  // Two streams: Pick's keys give stream 0 whenever it is eligible (its
  // deadline is its eligibility, so its key is t + 1, the least), else
  // stream 1, then eligible (excess > 1/2). Stream 1's walker is never read.
  if (eligible_[0] > t + 1) {
    ++counts[1];
    return 1;
  }
  const int64_t count = ++counts[0];
  // The deadline's hop is 0 (reach[1] == reach[0]): one hop per draw.
  Walker& w = walker_[0];
  eligible_[0] = (w.chained ? Hop(w, 0) : w.stepping && Steps(w, 0)) ? at_[w.k] + w.y : Walk(0, count, 0);
  return 0;
}

void TijdemanDraw::Enter(size_t i, size_t k) {
  Walker& w = walker_[i];
  const Segment& g = seg_[k];
  w.k = k;
  w.y = 0;
  w.entered = true;
  w.chained = false;
  w.stepping = false;
  w.value = g.L * twice_base_[k][i];
  const __int128 q0 = share_[k][i];
  // value(y) = L * twice_base + 2 L y q0 + y^2 (q1 - q0) on a linear segment.
  w.step = g.linear ? 2 * g.L * q0 + (share_[k + 1][i] - q0) : 2 * q0;
  w.curve = g.linear ? 2 * (share_[k + 1][i] - share_[k][i]) : 0;
  if (!g.linear && w.step > 0) {
    for (int h = 0; h < 2; ++h) {
      w.quot[h] = int64_t(g.hop[h] / w.step);
      w.rem[h] = int64_t(g.hop[h] % w.step);
      w.hop[h] = int64_t(g.hop[h]);
    }
  }
}

inline bool TijdemanDraw::Hop(Walker& w, int h) {
  // hop = quot * step + rem, value - goal = rest < step: the goal lies
  // quot or quot + 1 positions on, and the new rest is below step again.
  const bool more = w.rem[h] > w.rest;
  const int64_t n = w.quot[h] + (more ? 1 : 0);
  if (n > w.room) return false;
  w.rest = more ? w.rest + int64_t(w.step) - w.rem[h] : w.rest - w.rem[h];
  w.room -= n;
  w.y += n;
  w.value += __int128(n) * int64_t(w.step);
  w.goal += w.hop[h];
  return true;
}

int64_t TijdemanDraw::Walk(size_t i, int64_t count, int which) {
  Walker& w = walker_[i];
  if (w.never) return kNeverReached;
  const Segment* g = &seg_[w.k];
  __int128 goal = w.entered ? g->den * count + g->reach[which] : w.goal + g->hop[which];
  for (;;) {
    if (!g->linear) {
      if (w.value >= goal) break;
      if (w.step > 0) {
        // The value grows by `step` a position: chained, the quotient from
        // the remainder the last goal left; else a division.
        const __int128 n = w.chained ? w.quot[which] + (w.rem[which] > w.value - w.goal)
                                     : CeilDivide(goal - w.value, w.step);
        if (n <= g->span - w.y && n <= kNeverReached - at_[w.k] - w.y) {
          w.y += int64_t(n);
          w.value += n * w.step;
          break;
        }
      }
      if (w.k + 1 == seg_.size()) {
        w.never = true;
        return kNeverReached;
      }
    } else {
      // Step by step a few positions (the step grows by `curve`), then
      // solve: from y, n positions grow the value by n A + n^2 s.
      for (int steps = 0; w.value < goal && steps < kSteps && w.y < g->span; ++steps) {
        w.value += w.step;
        w.step += w.curve;
        ++w.y;
      }
      if (w.value >= goal) break;
      const int64_t left = g->span - w.y;
      const __int128 s = w.curve / 2, A = w.step - s, need = goal - w.value;
      if (left > 0 && __int128(left) * A + __int128(left) * left * s >= need) {
        const int64_t n = FirstGrowth(A, s, need, left);
        w.value += __int128(n) * A + __int128(n) * n * s;
        w.step += __int128(n) * w.curve;
        w.y += n;
        break;
      }
    }
    // Not reached within the segment: the next one, from its start.
    Enter(i, w.k + 1);
    g = &seg_[w.k];
    goal = g->den * count + g->reach[which];
  }
  w.chained = !g->linear && w.value - goal < w.step;
  if (w.chained) {
    w.rest = int64_t(w.value - goal);
    w.room = w.k + 1 == seg_.size() ? kNeverReached - at_[w.k] - w.y : g->span - w.y;
  }
  w.goal = goal;
  w.entered = false;
  w.stepping = g->linear;
  return at_[w.k] + w.y;
}

inline bool TijdemanDraw::Steps(Walker& w, int h) {
  const Segment& g = seg_[w.k];
  const __int128 goal = w.goal + g.hop[h];
  __int128 value = w.value, step = w.step;
  const int64_t cap = std::min<int64_t>(g.span - w.y, kSteps);
  int64_t n = 0;
  while (value < goal) {
    if (n == cap) return false;
    value += step;
    step += w.curve;
    ++n;
  }
  w.value = value;
  w.step = step;
  w.y += n;
  w.goal = goal;
  return true;
}

void TijdemanDraw::Drew(int64_t stream, int64_t count) {
  const size_t i = size_t(stream);
  if (b_ == 1) return;
  Walker& w = walker_[i];
  if (w.chained ? Hop(w, 0) : w.stepping && Steps(w, 0)) {
    eligible_[i] = at_[w.k] + w.y;
  } else {
    eligible_[i] = Walk(i, count, 0);
  }
  if (w.chained ? Hop(w, 1) : w.stepping && Steps(w, 1)) {
    deadline_[i] = at_[w.k] + w.y;
  } else {
    deadline_[i] = Walk(i, count, 1);
  }
}

int64_t TijdemanDraw::Pick(int64_t t) const {
  // Keys: max(deadline, t + 1) when eligible, else past every deadline; the
  // least key, ties to the lowest index. The targets' excesses over the
  // counts sum to 1 at t + 1, so one is at least 1/n >= 1/(2n - 2): some
  // stream is eligible.
  const int64_t now = t + 1;
  const int64_t* eligible = eligible_.data();
  const int64_t* deadline = deadline_.data();
  const size_t n = eligible_.size();
  size_t pick = 0;
  uint64_t best = std::numeric_limits<uint64_t>::max();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = eligible[i] <= now ? uint64_t(std::max(deadline[i], now)) : ~uint64_t{0};
    if (key < best) {
      best = key;
      pick = i;
    }
  }
  return int64_t(pick);
}

}  // namespace sluice::planner

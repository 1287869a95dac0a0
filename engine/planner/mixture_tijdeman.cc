// Tijdeman's draw: each stream's two thresholds depend on its own count
// alone, so they are recomputed only for the stream just drawn; a pick is a
// scan of the streams. Exact integer arithmetic throughout (a float only
// guesses where a linear segment's search starts).
#include "engine/planner/mixture_tijdeman.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sluice::planner {
namespace {

constexpr int64_t kNeverReached = std::numeric_limits<int64_t>::max();

// ceil(num / den) for den > 0.
__int128 CeilDivide128(__int128 num, __int128 den) { return num >= 0 ? (num + den - 1) / den : -((-num) / den); }

}  // namespace

TijdemanDraw::TijdemanDraw(const std::vector<int64_t>& at, const std::vector<std::vector<int64_t>>& share,
                           int64_t scale, bool linear)
    : at_(at), share_(share), scale_(scale), linear_(linear) {
  const size_t S = share_.empty() ? 0 : share_[0].size();
  b_ = S >= 2 ? 2 * int64_t(S) - 2 : 1;
  twice_base_.assign(at_.size(), std::vector<__int128>(S, 0));
  for (size_t k = 1; k < at_.size(); ++k) {
    const __int128 L = at_[k] - at_[k - 1];
    for (size_t i = 0; i < S; ++i) {
      twice_base_[k][i] = twice_base_[k - 1][i] + (linear_ ? L * (__int128(share_[k - 1][i]) + share_[k][i])
                                                           : 2 * L * share_[k - 1][i]);
    }
  }
  eligible_.assign(S, 0);
  deadline_.assign(S, 0);
  for (size_t i = 0; i < S; ++i) Drew(int64_t(i), 0);
}

bool TijdemanDraw::Reaches(size_t i, size_t k, int64_t y, int64_t count, int64_t num) const {
  // 2 L scale * target = L * twice_base + 2 L y q0 + y^2 slope on segment k.
  const bool linear = linear_ && k + 1 < at_.size();
  const __int128 L = linear ? at_[k + 1] - at_[k] : 1;
  const __int128 slope = linear ? __int128(share_[k + 1][i]) - share_[k][i] : 0;
  const __int128 den = 2 * L * scale_;
  const __int128 d = L * twice_base_[k][i] + 2 * L * y * share_[k][i] + __int128(y) * y * slope - den * count;
  // target - count >= num / b_, with 0 < num / b_ < 1: d < den here, so
  // d * b_ cannot overflow.
  if (d < 0) return false;
  if (d >= den) return true;
  return d * b_ >= den * num;
}

int64_t TijdemanDraw::FirstReach(size_t i, int64_t count, int64_t num) const {
  // The first point that reaches (never point 0: its target is 0).
  size_t lo = 0, hi = at_.size();
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    (Reaches(i, mid, 0, count, num) ? hi : lo) = mid;
  }
  const size_t k = lo;  // reached within segment k (or never, k the last)
  const bool last = k + 1 == at_.size();
  if (!(linear_ && !last)) {
    // Constant share q: (twice_base + 2 y q) b >= 2 scale (count b + num).
    const __int128 q = share_[k][i];
    if (q == 0) return kNeverReached;
    const __int128 y = std::max<__int128>(
        0, CeilDivide128(2 * scale_ * (__int128(count) * b_ + num) - twice_base_[k][i] * b_, 2 * q * b_));
    const __int128 T = at_[k] + y;
    return T > kNeverReached ? kNeverReached : int64_t(T);
  }
  // A linear segment: y in (0, L], Reaches(y) false at 0 and true at L.
  const int64_t L = at_[k + 1] - at_[k];
  const double q0 = double(share_[k][i]), slope = double(share_[k + 1][i]) - q0;
  const double r = 2.0 * double(L) * double(scale_) * (double(count) + double(num) / double(b_)) -
                   double(L) * double(twice_base_[k][i]);
  const double root = std::sqrt(std::max(0.0, 4 * double(L) * double(L) * q0 * q0 + 4 * slope * r));
  const double guess = 2 * r / (2 * double(L) * q0 + root);
  int64_t y = std::isfinite(guess) ? int64_t(std::clamp(std::ceil(guess), 1.0, double(L))) : L;
  int64_t below = 0, at_or_above = L;
  if (Reaches(i, k, y, count, num)) {
    at_or_above = y;
    below = std::max<int64_t>(0, y - 1);
  } else {
    below = y;
    at_or_above = std::min(L, y + 1);
  }
  if (below > 0 && Reaches(i, k, below, count, num)) below = 0;
  if (!Reaches(i, k, at_or_above, count, num)) at_or_above = L;
  while (at_or_above - below > 1) {
    const int64_t mid = below + (at_or_above - below) / 2;
    (Reaches(i, k, mid, count, num) ? at_or_above : below) = mid;
  }
  return at_[k] + at_or_above;
}

void TijdemanDraw::Drew(int64_t stream, int64_t count) {
  const size_t i = size_t(stream);
  if (b_ == 1) return;  // one stream: always it
  eligible_[i] = FirstReach(i, count, 1);
  deadline_[i] = FirstReach(i, count, b_ - 1);
}

int64_t TijdemanDraw::Pick(int64_t t) const {
  size_t pick = eligible_.size();
  int64_t best = kNeverReached;
  for (size_t i = 0; i < eligible_.size(); ++i) {
    if (eligible_[i] > t + 1) continue;
    const int64_t due = std::max(deadline_[i], t + 1);
    if (pick == eligible_.size() || due < best) {
      pick = i;
      best = due;
    }
  }
  // The targets' excesses over the counts sum to 1 at t + 1, so one is at
  // least 1/n >= 1/(2n - 2): some stream is eligible.
  return pick == eligible_.size() ? 0 : int64_t(pick);
}

}  // namespace sluice::planner

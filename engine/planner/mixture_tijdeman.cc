// Tijdeman's draw: each stream's two thresholds depend on its own count
// alone, so only the drawn stream's move, forward from where they were (a
// count's threshold never precedes the previous count's): on a step segment
// or the open last one by one division, on a linear segment by the
// quadratic's floating-point root settled by exact comparisons (the float
// only guesses). Exact integer arithmetic decides; a pick scans the streams.
#include "engine/planner/mixture_tijdeman.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sluice::planner {
namespace {

constexpr int64_t kNeverReached = std::numeric_limits<int64_t>::max();

// ceil(num / den) for num > 0, den > 0; 64-bit division when both fit.
__int128 CeilDivide(__int128 num, __int128 den) {
  constexpr __int128 kFits = std::numeric_limits<int64_t>::max();
  if (num <= kFits && den <= kFits) return (uint64_t(num) + uint64_t(den) - 1) / uint64_t(den);
  return (num + den - 1) / den;
}

// A guess's double, without the library's exact 128-bit conversion.
double Approx(__int128 v) { return double(int64_t(v >> 64)) * 0x1p64 + double(uint64_t(v)); }

}  // namespace

TijdemanDraw::TijdemanDraw(const std::vector<int64_t>& at, const std::vector<std::vector<int64_t>>& share,
                           int64_t scale, bool linear)
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
    g.reach[1] = b_ > 1 ? CeilDivide(g.den * (b_ - 1), b_) : g.den;
  }
  track_.assign(2 * S, Track{});
  eligible_.assign(S, 0);
  deadline_.assign(S, 0);
  if (b_ == 1) return;  // one stream: always it
  for (size_t i = 0; i < S; ++i) {
    eligible_[i] = Advance(i, track_[2 * i], 0, 0);
    deadline_[i] = Advance(i, track_[2 * i + 1], 0, 1);
  }
}

__int128 TijdemanDraw::StartOf(size_t i, size_t k, int64_t count) const {
  return seg_[k].L * twice_base_[k][i] - seg_[k].den * count;
}

int64_t TijdemanDraw::Advance(size_t i, Track& tr, int64_t count, int which) {
  if (count < tr.count) tr = Track{};  // not this class's use; start over
  if (tr.never) return kNeverReached;
  tr.d -= seg_[tr.k].den * (count - tr.count);
  tr.count = count;
  for (;;) {
    const Segment& g = seg_[tr.k];
    const __int128 need = g.reach[which] - tr.d;  // d must grow this much
    if (need <= 0) break;
    const int64_t q0 = share_[tr.k][i];
    const int64_t room = g.span - tr.y;  // offsets left in the segment
    const bool last = tr.k + 1 == seg_.size();
    if (!g.linear) {
      // d grows by 2 q0 per position.
      if (q0 > 0) {
        const __int128 step = 2 * __int128(q0);
        const __int128 n = CeilDivide(need, step);
        if (n <= room && n <= kNeverReached - at_[tr.k] - tr.y) {
          tr.y += int64_t(n);
          tr.d += n * step;
          break;
        }
      }
      if (last) {
        tr.never = true;
        return kNeverReached;
      }
    } else {
      // From offset y, n more positions grow d by n A + n^2 s.
      const __int128 s = __int128(share_[tr.k + 1][i]) - q0;
      const __int128 A = 2 * (__int128(g.L) * q0 + __int128(tr.y) * s);
      const auto grow = [&](int64_t n) { return __int128(n) * A + __int128(n) * n * s; };
      if (grow(room) >= need) {
        const double a = Approx(A), r = Approx(need);
        const double root = std::sqrt(std::max(0.0, a * a + 4 * double(int64_t(s)) * r));
        const double guess = 2 * r / (a + root);
        const int64_t n = std::isfinite(guess) ? int64_t(std::clamp(std::ceil(guess), 1.0, double(room))) : room;
        // grow(below) < need <= grow(at_or_above).
        int64_t below = 0, at_or_above = room;
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
        tr.d += grow(at_or_above);
        tr.y += at_or_above;
        break;
      }
    }
    // Not reached within the segment: the next one, from its start.
    ++tr.k;
    tr.y = 0;
    tr.d = StartOf(i, tr.k, count);
  }
  return at_[tr.k] + tr.y;
}

void TijdemanDraw::Drew(int64_t stream, int64_t count) {
  const size_t i = size_t(stream);
  if (b_ == 1) return;
  eligible_[i] = Advance(i, track_[2 * i], count, 0);
  deadline_[i] = Advance(i, track_[2 * i + 1], count, 1);
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

// The orig partition inverted: where each column of a canonical row lands, so
// an epoch produced row by row (py1e shuffles one canonical node at a time)
// is written straight into the 5-D array without the partition's own array
// of positions or a separate remapping pass.
#include <algorithm>

#include "engine/planner/partition_orig.h"

namespace sluice::planner {
namespace {

// A step of `d` split over mixed-radix digits (low digit of radix `lo_radix`).
struct Split {
  int64_t lo, hi;
};
Split SplitBy(int64_t d, int64_t radix) { return {d % radix, d / radix}; }

}  // namespace

void OrigLayout::ScatterRow(int64_t c, const int64_t* values, int64_t n, const int64_t* table,
                            WorkArray& work) const {
  // Column j of row c is element k = j*C + c of the column-major matrix; node
  // p = (k - drop) % P reads it as its node-local index jj = (k - drop) / P,
  // i.e. rank r = jj % R at rank position q = jj / R, which sits at worker
  // (q / B) % W, batch q / (W*B), slot q % B. Stepping j by one moves k by C;
  // the digits (p, r, s, w, b) are carried like an odometer, no divisions.
  int64_t j = c >= drop_ ? 0 : (drop_ - c + C_ - 1) / C_;
  if (j >= L_ || n <= 0) return;
  const int64_t kk = j * C_ + c - drop_;
  int64_t p = kk % P_, jj = kk / P_;
  int64_t r = jj % R_, q = jj / R_;
  int64_t s = q % B_, w = (q / B_) % W_, b = q / (B_ * W_);
  const int64_t dp = C_ % P_, djj = C_ / P_;
  // jj moves by djj or djj + 1 (carry from p); split both over r and q.
  const Split r0 = SplitBy(djj, R_), r1 = SplitBy(djj + 1, R_);
  // q moves by r0.hi .. r1.hi + 1 (carry from r): at most three values.
  const int64_t dq_min = r0.hi;
  Split qs[3], qw[3];
  for (int e = 0; e < 3; ++e) {
    qs[e] = SplitBy(dq_min + e, B_);       // slot digit, and batches-of-B
    qw[e] = SplitBy(qs[e].hi, W_);          // worker digit, and batch
  }
  const int64_t per_worker = batches_ * B_;
  int64_t* const ids = work.ids.data();
  const int64_t last = n - 1;
  if (dp == 0 && r0.lo == 0 && r0.hi == 1) {
    // Each column moves q by exactly one (C = P*R, the usual many-canonical-
    // node layout): p and r stay put and the row is dealt in contiguous runs
    // of up to B slots, copied as such.
    const int64_t q_end = M_ > r ? (M_ - r + R_ - 1) / R_ : 0;  // q with q*R + r < M
    const int64_t j_end = std::min(L_, j + (q_end - q));
    int64_t* const rank_base = ids + (p * R_ + r) * W_ * per_worker;
    while (j < j_end) {
      const int64_t len = std::min(B_ - s, j_end - j);
      int64_t* dst = rank_base + w * per_worker + b * B_ + s;
      if (table) {
        for (int64_t i = 0; i < len; ++i) dst[i] = table[values[std::min(j + i, last)]];
      } else {
        for (int64_t i = 0; i < len; ++i) dst[i] = values[std::min(j + i, last)];
      }
      j += len;
      s += len;
      if (s == B_) {
        s = 0;
        if (++w == W_) {
          w = 0;
          ++b;
        }
      }
    }
    return;
  }
  for (; j < L_ && jj < M_; ++j) {
    int64_t v = values[std::min(j, last)];
    if (table) v = table[v];
    ids[((p * R_ + r) * W_ + w) * per_worker + b * B_ + s] = v;
    // Next column: k += C.
    p += dp;
    const bool pc = p >= P_;
    if (pc) p -= P_;
    jj += djj + pc;
    const Split& rs = pc ? r1 : r0;
    r += rs.lo;
    const bool rc = r >= R_;
    if (rc) r -= R_;
    const int e = int(rs.hi - dq_min + rc);
    s += qs[e].lo;
    const bool sc = s >= B_;
    if (sc) s -= B_;
    w += qw[e].lo + sc;
    int64_t db = qw[e].hi;
    if (w >= W_) {
      w -= W_;
      ++db;
    }
    b += db;
  }
}

void OrigLayout::FillExtension(WorkArray& work) const {
  if (u_ == 0) return;
  auto slot = [&](int64_t p, int64_t jj) -> int64_t& {
    const int64_t r = jj % R_, q = jj / R_;
    return work.At(p, r, (q / B_) % W_, q / (B_ * W_), q % B_);
  };
  for (int64_t p = 0; p < P_; ++p)
    for (int64_t e = 0; e < u_; ++e) {
      // As NodeElem: index M + e repeats node-local index `from`.
      const int64_t from = R_ + u_ - 1 <= M_ ? M_ - R_ - u_ + 1 + e : e % M_;
      slot(p, M_ + e) = slot(p, from);
    }
}

}  // namespace sluice::planner

#include "engine/planner/mixture_schedule.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

Status MixtureError(const std::string& what) { return MosaicValueError("mixture: " + what); }

// The shortest text that reads back as `v` (Python's repr of a float).
std::string ShortestText(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace

Result<MixtureInterpolation> ParseMixtureInterpolation(std::string_view name) {
  if (name == "step") return MixtureInterpolation::kStep;
  if (name == "linear") return MixtureInterpolation::kLinear;
  return MosaicValueError("mixture_interpolation must be 'step' or 'linear', got '" + std::string(name) + "'");
}

Result<MixtureRule> ParseMixtureRule(std::string_view name) {
  if (name == "tijdeman") return MixtureRule::kTijdeman;
  if (name == "deficit") return MixtureRule::kDeficit;
  return MosaicValueError("mixture_rule must be 'tijdeman' or 'deficit', got '" + std::string(name) + "'");
}

std::string_view MixtureRuleName(MixtureRule rule) {
  return rule == MixtureRule::kTijdeman ? "tijdeman" : "deficit";
}

Result<QuantizedMixture> QuantizeMixture(const MixtureSchedule& schedule, int64_t num_streams) {
  if (schedule.points.empty()) return MixtureError("the schedule has no points");
  QuantizedMixture out;
  out.interpolation = schedule.interpolation;
  out.rule = schedule.rule;
  for (size_t k = 0; k < schedule.points.size(); ++k) {
    const MixturePoint& point = schedule.points[k];
    const std::string name = "point " + std::to_string(k);
    if (k == 0 && point.at != 0) {
      return MixtureError("the first point must be at 0 samples seen, got " + std::to_string(point.at));
    }
    if (k > 0 && point.at <= schedule.points[k - 1].at) {
      return MixtureError("points must be strictly increasing in samples seen: " + name + " at " +
                          std::to_string(point.at) + " follows point " + std::to_string(k - 1) + " at " +
                          std::to_string(schedule.points[k - 1].at));
    }
    if (point.at > kMaxPlanElements) {
      return MixtureError(name + " at " + std::to_string(point.at) + " is beyond the planner's limit of " +
                          std::to_string(kMaxPlanElements) + " samples");
    }
    if (int64_t(point.weights.size()) != num_streams) {
      return MixtureError(name + " has " + std::to_string(point.weights.size()) + " weights for " +
                          std::to_string(num_streams) + " streams");
    }
    double total = 0;
    for (size_t i = 0; i < point.weights.size(); ++i) {
      const double w = point.weights[i];
      if (!std::isfinite(w)) return MixtureError(name + "'s weight " + std::to_string(i) + " is not a finite number");
      if (w < 0) return MixtureError(name + "'s weight " + std::to_string(i) + " is negative (" + ShortestText(w) + ")");
      total += w;
    }
    if (!std::isfinite(total)) return MixtureError(name + "'s weights sum beyond the range of a double");
    if (total == 0) return MixtureError(name + "'s weights are all zero");
    // Cut [0, scale] at each prefix sum's share: the shares are non-negative
    // (the prefix sums only grow), sum to the scale exactly, and a zero
    // weight gets zero.
    std::vector<int64_t> share(point.weights.size());
    double prefix = 0;
    int64_t cut = 0;
    for (size_t i = 0; i < point.weights.size(); ++i) {
      prefix += point.weights[i];
      int64_t next = kMixtureScale;
      if (i + 1 < point.weights.size()) {
        const double x = std::floor(prefix / total * double(kMixtureScale));
        next = x >= double(kMixtureScale) ? kMixtureScale : int64_t(x);
      }
      share[i] = next - cut;
      cut = next;
    }
    out.at.push_back(point.at);
    out.share.push_back(std::move(share));
  }
  return out;
}

MixtureSequencer::MixtureSequencer(QuantizedMixture mixture) : m_(std::move(mixture)) {
  const size_t S = size_t(m_.num_streams());
  counts_.assign(S, 0);
  twice_base_.assign(S, 0);
  deficit_.assign(S, 0);
  step_.assign(S, 0);
  curve_.assign(S, 0);
  if (m_.rule == MixtureRule::kTijdeman) {
    tijdeman_.emplace(m_.at, m_.share, kMixtureScale, m_.interpolation == MixtureInterpolation::kLinear);
    return;
  }
  EnterSegment();
}

MixtureSequencer::MixtureSequencer(QuantizedMixture mixture, int64_t position, std::vector<int64_t> counts)
    : m_(std::move(mixture)), t_(position), counts_(std::move(counts)) {
  const size_t S = size_t(m_.num_streams());
  twice_base_.assign(S, 0);
  deficit_.assign(S, 0);
  step_.assign(S, 0);
  curve_.assign(S, 0);
  if (m_.rule == MixtureRule::kTijdeman) {
    tijdeman_.emplace(m_.at, m_.share, kMixtureScale, m_.interpolation == MixtureInterpolation::kLinear,
                      counts_.data());
    return;
  }
  // The segments wholly before t_ (a segment is entered at its first
  // position), as Next() adds them.
  while (seg_ + 1 < m_.at.size() && m_.at[seg_ + 1] <= t_) {
    const __int128 L = m_.at[seg_ + 1] - m_.at[seg_];
    const auto& q0 = m_.share[seg_];
    const auto& q1 = m_.share[seg_ + 1];
    for (size_t i = 0; i < S; ++i) {
      twice_base_[i] += m_.interpolation == MixtureInterpolation::kLinear ? L * (__int128(q0[i]) + q1[i])
                                                                          : 2 * L * q0[i];
    }
    ++seg_;
  }
  EnterSegment(t_ - m_.at[seg_]);
}

// Position t_ is `x` positions into segment seg_: its deficits (for the
// target after x + 1 samples) and their growth.
void MixtureSequencer::EnterSegment(int64_t x) {
  const bool last = seg_ + 1 >= m_.at.size();
  const bool linear = m_.interpolation == MixtureInterpolation::kLinear && !last;
  len_ = linear ? __int128(m_.at[seg_ + 1] - m_.at[seg_]) : 1;
  const auto& q0 = m_.share[seg_];
  for (size_t i = 0; i < counts_.size(); ++i) {
    const __int128 slope = linear ? __int128(m_.share[seg_ + 1][i]) - q0[i] : 0;
    const __int128 y = __int128(x) + 1;  // samples of the segment after position t_
    deficit_[i] = len_ * (twice_base_[i] - 2 * __int128(counts_[i]) * kMixtureScale) + 2 * len_ * y * q0[i] +
                  y * y * slope;
    // From y to y + 1 the deficit grows by 2 len q0 + (2y + 1) slope: 3
    // slopes for y = 1, two more each step after.
    step_[i] = 2 * len_ * q0[i] + (2 * y + 1) * slope;
    curve_[i] = 2 * slope;
  }
}

int64_t MixtureSequencer::Next() {
  if (tijdeman_) {
    int64_t s;
    if (tijdeman_->two_streams()) {
      s = tijdeman_->DrawOfTwo(t_, counts_.data());
    } else {
      s = tijdeman_->Pick(t_);
      tijdeman_->Drew(s, ++counts_[size_t(s)]);
    }
    ++t_;
    return s;
  }
  size_t pick = 0;
  for (size_t i = 1; i < deficit_.size(); ++i)
    if (deficit_[i] > deficit_[pick]) pick = i;
  deficit_[pick] -= 2 * len_ * kMixtureScale;
  ++counts_[pick];
  ++t_;
  const size_t S = counts_.size();
  if (seg_ + 1 < m_.at.size() && t_ == m_.at[seg_ + 1]) {
    const auto& q0 = m_.share[seg_];
    // The segment's whole integral, then the next segment from its start.
    const __int128 L = m_.at[seg_ + 1] - m_.at[seg_];
    const auto& q1 = m_.share[seg_ + 1];
    for (size_t i = 0; i < S; ++i) {
      twice_base_[i] += m_.interpolation == MixtureInterpolation::kLinear ? L * (__int128(q0[i]) + q1[i])
                                                                          : 2 * L * q0[i];
    }
    ++seg_;
    EnterSegment();
    return int64_t(pick);
  }
  for (size_t i = 0; i < S; ++i) {
    deficit_[i] += step_[i];
    step_[i] += curve_[i];
  }
  return int64_t(pick);
}

void MixtureSequencer::SkipTo(int64_t position) {
  while (t_ < position) Next();
}

MixtureSequencer::Target MixtureSequencer::TargetAt(int64_t stream, int64_t position) const {
  const size_t i = size_t(stream);
  const bool linear_schedule = m_.interpolation == MixtureInterpolation::kLinear;
  __int128 twice_base = 0;
  size_t k = 0;
  while (k + 1 < m_.at.size() && m_.at[k + 1] <= position) {
    const __int128 L = m_.at[k + 1] - m_.at[k];
    twice_base += linear_schedule ? L * (__int128(m_.share[k][i]) + m_.share[k + 1][i]) : 2 * L * m_.share[k][i];
    ++k;
  }
  const bool linear = linear_schedule && k + 1 < m_.at.size();
  const __int128 L = linear ? __int128(m_.at[k + 1] - m_.at[k]) : 1;
  const __int128 slope = linear ? __int128(m_.share[k + 1][i]) - m_.share[k][i] : 0;
  const __int128 x = position - m_.at[k];
  Target out;
  out.num = L * twice_base + 2 * L * x * m_.share[k][i] + x * x * slope;
  out.den = 2 * L * kMixtureScale;
  return out;
}

QuantizedMixture MixtureFrom(const QuantizedMixture& m, int64_t from) {
  size_t k = 0;
  while (k + 1 < m.at.size() && m.at[k + 1] <= from) ++k;
  QuantizedMixture out;
  out.interpolation = m.interpolation;
  out.rule = m.rule;
  out.at.push_back(0);
  const bool between = m.interpolation == MixtureInterpolation::kLinear && k + 1 < m.at.size() && m.at[k] < from;
  if (!between) {
    out.share.push_back(m.share[k]);
  } else {
    // The prefix sums move linearly too; cutting them keeps the shares
    // non-negative and their sum exactly the scale.
    const __int128 L = m.at[k + 1] - m.at[k], x = from - m.at[k];
    std::vector<int64_t> share(m.share[k].size());
    __int128 p0 = 0, p1 = 0, cut = 0;
    for (size_t i = 0; i < share.size(); ++i) {
      p0 += m.share[k][i];
      p1 += m.share[k + 1][i];
      const __int128 next = (p0 * (L - x) + p1 * x) / L;
      share[i] = int64_t(next - cut);
      cut = next;
    }
    out.share.push_back(std::move(share));
  }
  for (size_t j = k + 1; j < m.at.size(); ++j) {
    out.at.push_back(m.at[j] - from);
    out.share.push_back(m.share[j]);
  }
  return out;
}

MixtureRun::MixtureRun(std::vector<MixturePhase> phases) : phases_(std::move(phases)) {
  counts_.assign(phases_.empty() ? 0 : size_t(phases_[0].mixture.num_streams()), 0);
}

int64_t MixtureRun::Next() {
  if (next_ < phases_.size() && t_ == phases_[next_].from) {
    seq_.emplace(MixtureFrom(phases_[next_].mixture, t_));
    ++next_;
  }
  const int64_t s = seq_->Next();
  ++counts_[size_t(s)];
  ++t_;
  return s;
}

void MixtureRun::SkipTo(int64_t position) {
  while (t_ < position) Next();
}

MixtureRun::State MixtureRun::state() const {
  return State{t_, counts_, seq_ ? seq_->counts() : std::vector<int64_t>{}};
}

void MixtureRun::Restore(const State& state) {
  t_ = state.position;
  counts_ = state.counts;
  // The phases begun before t_ (one beginning at t_ begins at the next
  // Next()); the last of them is the current one.
  next_ = 0;
  while (next_ < phases_.size() && phases_[next_].from < t_) ++next_;
  seq_.reset();
  if (next_ > 0) {
    const MixturePhase& p = phases_[next_ - 1];
    seq_.emplace(MixtureFrom(p.mixture, p.from), t_ - p.from, state.phase_counts);
  }
}

}  // namespace sluice::planner

// Mixture schedules: stream weights as a function of the samples seen in an
// epoch, and the global order of streams they give (engine/planner/README.md,
// "Mixture schedules"). Plain values and pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/planner/mixture_tijdeman.h"

namespace sluice::planner {

enum class MixtureInterpolation { kStep, kLinear };

// "step" | "linear"; else ValueError.
Result<MixtureInterpolation> ParseMixtureInterpolation(std::string_view name);

// How the sequencer picks the stream of a position (README.md, "Mixture
// schedules"). kTijdeman keeps every count within one sample of its target
// for any number of streams; kDeficit (the largest deficit, the rule of
// states saved before kTijdeman) only for up to three. New plans use
// kTijdeman; a resume keeps the rule its state recorded.
enum class MixtureRule { kDeficit, kTijdeman };

// "deficit" | "tijdeman"; else ValueError.
Result<MixtureRule> ParseMixtureRule(std::string_view name);
std::string_view MixtureRuleName(MixtureRule rule);

// From `at` samples seen on, the streams are drawn in proportion to
// `weights` (one per stream, relative). kStep holds them until the next
// point; kLinear moves them linearly to the next point's. After the last
// point its weights hold.
struct MixturePoint {
  int64_t at = 0;
  std::vector<double> weights;
};

struct MixtureSchedule {
  std::vector<MixturePoint> points;
  MixtureInterpolation interpolation = MixtureInterpolation::kStep;
  MixtureRule rule = MixtureRule::kTijdeman;
};

// The schedule's exact form: each point's weights normalised to integers
// summing to kMixtureScale (see README), so that targets and deficits are
// computed exactly, the same on every machine.
inline constexpr int64_t kMixtureScale = int64_t{1} << 48;

struct QuantizedMixture {
  std::vector<int64_t> at;                  // point positions, at[0] == 0
  std::vector<std::vector<int64_t>> share;  // per point, per stream; sums to kMixtureScale
  MixtureInterpolation interpolation = MixtureInterpolation::kStep;
  MixtureRule rule = MixtureRule::kTijdeman;
  int64_t num_streams() const { return share.empty() ? 0 : int64_t(share[0].size()); }
};

// Checks the schedule against `num_streams` streams and quantizes it.
// Errors (ValueError, "mixture: ..."): no points, a point whose weight count
// differs from the stream count, a negative or non-finite weight, a point
// whose weights are all zero, a first point not at 0, points not strictly
// increasing, a point beyond the planner's 2^36 samples.
Result<QuantizedMixture> QuantizeMixture(const MixtureSchedule& schedule, int64_t num_streams);

// The stream of each global position, one position at a time from 0, by
// the mixture's rule over the cumulative targets (the integral of the
// weights over [0, t + 1) after t + 1 samples). kTijdeman: TijdemanDraw,
// every count within 1 - 1/(2n - 2) samples of its target (n >= 2 streams).
// kDeficit: the stream whose count falls furthest below its target, ties to
// the lowest index; counts never exceed a target by one sample or more, and
// for up to three streams never fall one sample or more below it; with more
// streams they can, a little (README: the bounds, why, and what was
// measured).
class MixtureSequencer {
 public:
  explicit MixtureSequencer(QuantizedMixture mixture);
  // The sequencer at `position` after `counts` draws per stream (counts()
  // of a sequencer at that position, e.g. a checkpoint's): the same picks
  // from there as a walk from 0. Every rule's state is a function of the
  // position and the counts. Needs counts summing to position.
  MixtureSequencer(QuantizedMixture mixture, int64_t position, std::vector<int64_t> counts);
  // The stream of position position(), then advances.
  int64_t Next();
  // Advances to `position` (>= position()) without reporting the streams.
  void SkipTo(int64_t position);
  int64_t position() const { return t_; }
  // Samples drawn from each stream before position().
  const std::vector<int64_t>& counts() const { return counts_; }
  // The cumulative target of `stream` after `position` samples, exactly:
  // num / den samples (den > 0). For tests and reports.
  struct Target {
    __int128 num = 0, den = 1;
  };
  Target TargetAt(int64_t stream, int64_t position) const;

 private:
  // kDeficit: the deficits of position t_, `x` positions into segment seg_.
  void EnterSegment(int64_t x = 0);
  QuantizedMixture m_;
  std::optional<TijdemanDraw> tijdeman_;  // kTijdeman's state; else the deficits below
  int64_t t_ = 0;
  size_t seg_ = 0;           // points [seg_] <= t_ < at[seg_ + 1] (or the last)
  __int128 len_ = 1;         // segment length (1 for the open last segment and step)
  std::vector<int64_t> counts_;
  std::vector<__int128> twice_base_;  // 2 * scale * target at the segment start
  std::vector<__int128> deficit_;     // 2 * len * scale * (target(t_ + 1) - count)
  std::vector<__int128> step_;        // deficit_'s growth to the next position
  std::vector<__int128> curve_;       // step_'s growth (2 * slope; 0 for step)
};

// The schedule's weights from position `from` on, as a schedule whose
// position 0 is `from`: the point in force at `from` (on a linear segment,
// the weights there, cut to integers exactly as QuantizeMixture cuts) at 0,
// then the later points, moved back by `from`.
QuantizedMixture MixtureFrom(const QuantizedMixture& mixture, int64_t from);

// One schedule of an epoch whose schedule was changed at resumes: it decides
// positions [from, the next phase's from), with its weights from `from` on
// (MixtureFrom) and its targets counted from `from`.
struct MixturePhase {
  int64_t from = 0;
  QuantizedMixture mixture;
};

// The stream of each position of an epoch of phases (phases[0].from == 0,
// strictly increasing). Within a phase, MixtureSequencer's rule over the
// phase's own counts and targets; the counts are the epoch's (every phase's
// draws), so a stream read in a later phase continues where it stopped.
class MixtureRun {
 public:
  explicit MixtureRun(std::vector<MixturePhase> phases);
  int64_t Next();
  void SkipTo(int64_t position);
  int64_t position() const { return t_; }
  // Samples drawn from each stream before position(), in every phase.
  const std::vector<int64_t>& counts() const { return counts_; }
  // What the run needs to continue from position(): the epoch's counts and
  // the current phase's own (its sequencer's counts; none at position 0).
  struct State {
    int64_t position = 0;
    std::vector<int64_t> counts, phase_counts;
  };
  State state() const;
  // Continues from `state` (of a run over the same phases), as if walked
  // there: the same picks after.
  void Restore(const State& state);

 private:
  std::vector<MixturePhase> phases_;
  size_t next_ = 0;  // the phase that starts next
  std::optional<MixtureSequencer> seq_;
  int64_t t_ = 0;
  std::vector<int64_t> counts_;
};

}  // namespace sluice::planner

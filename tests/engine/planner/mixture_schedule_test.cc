// Mixture schedules: exact stream sequences of hand-checked schedules (the
// derivations are in the comments), the exact targets, the bounds each rule
// keeps, and every validation error's text.
#include "engine/planner/mixture_schedule.h"

#include <gtest/gtest.h>

#include "engine/planner/mixture_tijdeman.h"

#include <cmath>
#include <random>

namespace sluice::planner {
namespace {

MixtureSchedule Schedule(std::vector<MixturePoint> points,
                         MixtureInterpolation interpolation = MixtureInterpolation::kStep) {
  return MixtureSchedule{std::move(points), interpolation};
}

std::vector<int64_t> Streams(const MixtureSchedule& schedule, int64_t streams, int64_t n) {
  auto q = QuantizeMixture(schedule, streams);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  MixtureSequencer seq(*q);
  std::vector<int64_t> out;
  for (int64_t t = 0; t < n; ++t) out.push_back(seq.Next());
  return out;
}

std::string Error(const MixtureSchedule& schedule, int64_t streams) {
  auto q = QuantizeMixture(schedule, streams);
  return q.ok() ? "ok" : q.status().message();
}

TEST(MixtureScheduleTest, QuantizedSharesSumToTheScale) {
  auto q = QuantizeMixture(Schedule({{0, {0.7, 0.2, 0.1}}, {10, {0, 3, 0}}}), 3);
  ASSERT_TRUE(q.ok());
  const int64_t Q = kMixtureScale;
  // Cuts at floor(prefix / total * Q): 0.7 -> 197032483697459, 0.9 -> 253327479039590.
  EXPECT_EQ(q->share[0], (std::vector<int64_t>{197032483697459, 253327479039590 - 197032483697459,
                                               Q - 253327479039590}));
  EXPECT_EQ(q->share[1], (std::vector<int64_t>{0, Q, 0}));
  EXPECT_EQ(q->at, (std::vector<int64_t>{0, 10}));
}

// (0: [1, 1]) then (4: [1, 3]), step. Targets after t+1 samples and the pick
// (largest target - count, ties to the lower index):
//  t=0 (.5,.5)->0  t=1 (1,1)->1  t=2 (1.5,1.5)->0  t=3 (2,2)->1
//  then 2 + x*(1/4, 3/4), x = t+1-4:
//  t=4 (2.25,2.75) c=(2,2)->1  t=5 (2.5,3.5) c=(2,3)->0  t=6 (2.75,4.25) c=(3,3)->1
//  t=7 (3,5) c=(3,4)->1  t=8 (3.25,5.75) c=(3,5)->1  t=9 (3.5,6.5) c=(3,6)->0
TEST(MixtureScheduleTest, StepTwoStreams) {
  EXPECT_EQ(Streams(Schedule({{0, {1, 1}}, {4, {1, 3}}}), 2, 10),
            (std::vector<int64_t>{0, 1, 0, 1, 1, 0, 1, 1, 1, 0}));
}

// (0: [2, 1, 1]) then (4: [0, 0, 1]), step:
//  t=0 (.5,.25,.25)->0  t=1 (1,.5,.5) c=(1,0,0) tie 1,2 ->1  t=2 (1.5,.75,.75) c=(1,1,0)->2
//  t=3 (2,1,1) c=(1,1,1)->0  then only stream 2's target grows.
TEST(MixtureScheduleTest, StepThreeStreams) {
  EXPECT_EQ(Streams(Schedule({{0, {2, 1, 1}}, {4, {0, 0, 1}}}), 3, 8),
            (std::vector<int64_t>{0, 1, 2, 0, 2, 2, 2, 2}));
}

// (0: [1, 0]) to (4: [0, 1]), linear: w0(s) = 1 - s/4, so after x samples
// T0 = x - x^2/8, T1 = x^2/8 up to x = 4, then T1 grows alone:
//  t=0 (7/8,1/8)->0  t=1 (3/2,1/2) c=(1,0) tie ->0  t=2 (15/8,9/8) c=(2,0)->1
//  t=3 (2,2) c=(2,1)->1  t>=4 -> 1.
TEST(MixtureScheduleTest, LinearTwoStreams) {
  EXPECT_EQ(Streams(Schedule({{0, {1, 0}}, {4, {0, 1}}}, MixtureInterpolation::kLinear), 2, 7),
            (std::vector<int64_t>{0, 0, 1, 1, 1, 1, 1}));
  // The same points, step: stream 0 alone until 4, then stream 1.
  EXPECT_EQ(Streams(Schedule({{0, {1, 0}}, {4, {0, 1}}}), 2, 7), (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1}));
}

// (0: [1, 1, 2]) to (8: [1, 1, 0]), linear (shares 1/4,1/4,1/2 -> 1/2,1/2,0):
// T0 = T1 = x/4 + x^2/64, T2 = x/2 - x^2/32 up to x = 8, then T2 stays 2.
// Tijdeman's rule (n = 3: eligible when T - c >= 1/4, then the earliest
// T' >= t + 1 with T(T') >= c + 3/4, ties to the lower index):
//  t=0 (.27,.27,.47) all eligible, due (3,3,2)->2
//  t=1 (.5625,.5625,.875) c=(0,0,1) eligible 0,1, due (3,3)->0
//  t=2 (.89,.89,1.22) c=(1,0,1) only 1 eligible (2's excess .22 < 1/4)->1
//  t=3 (1.25,1.25,1.5) c=(1,1,1) all eligible, all due at 6 (1.75)->0
//  t=4 (1.64,1.64,1.72) c=(2,1,1) eligible 1,2, both due at 6->1
//  t=5 (2.06,2.06,1.88) c=(2,2,1) only 2 eligible->2
//  t=6 (2.52,2.52,1.97) c=(2,2,2) eligible 0,1, due 8->0  t=7 ->1  then 0, 1, ...
// The largest-deficit rule (kDeficit) picks 2 at t=3 (deficits .25, .25,
// .5), then 0 and 1 at t=4 and 5: the same counts two positions later.
TEST(MixtureScheduleTest, LinearThreeStreamsAndExactTargets) {
  const MixtureSchedule s = Schedule({{0, {1, 1, 2}}, {8, {1, 1, 0}}}, MixtureInterpolation::kLinear);
  auto q = QuantizeMixture(s, 3);
  ASSERT_TRUE(q.ok());
  MixtureSequencer seq(*q);
  // T2(4) = 2 - 16/32 = 1.5; T0(4) = 1 + 16/64 = 1.25; T2(8) = 2, T0(8) = 3; T2(12) = 2.
  auto eq = [&](int64_t stream, int64_t at, double expect) {
    const auto t = seq.TargetAt(stream, at);
    EXPECT_EQ(double(t.num) / double(t.den), expect) << "stream " << stream << " at " << at;
  };
  eq(2, 4, 1.5);
  eq(0, 4, 1.25);
  eq(2, 8, 2.0);
  eq(0, 8, 3.0);
  eq(1, 12, 5.0);
  eq(2, 12, 2.0);
  EXPECT_EQ(Streams(s, 3, 12), (std::vector<int64_t>{2, 0, 1, 0, 1, 2, 0, 1, 0, 1, 0, 1}));
  MixtureSchedule deficit = s;
  deficit.rule = MixtureRule::kDeficit;
  EXPECT_EQ(Streams(deficit, 3, 12), (std::vector<int64_t>{2, 0, 1, 2, 0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(MixtureScheduleTest, TargetsOfAStepSchedule) {
  auto q = QuantizeMixture(Schedule({{0, {1, 1}}, {4, {1, 3}}}), 2);
  ASSERT_TRUE(q.ok());
  MixtureSequencer seq(*q);
  const auto t = seq.TargetAt(1, 6);  // 2 + 2 * 3/4
  EXPECT_EQ(t.num * 2, t.den * 7);
  const auto u = seq.TargetAt(0, 0);
  EXPECT_EQ(u.num, 0);
}

// Counts follow the cumulative targets, checked exactly at every position.
// Tijdeman's rule (the default): |c - T| <= 1 - 1/(2n - 2) for n >= 2
// streams. The largest deficit (kDeficit): never one sample or more above
// (any number of streams), never one or more below for up to three streams,
// less than streams - 1 below for more.
void CheckBound(MixtureSchedule s, int64_t streams, int64_t n, bool tight,
                MixtureRule rule = MixtureRule::kTijdeman) {
  s.rule = rule;
  auto q = QuantizeMixture(s, streams);
  ASSERT_TRUE(q.ok());
  MixtureSequencer seq(*q);
  const __int128 b = 2 * streams - 2;
  for (int64_t t = 1; t <= n; ++t) {
    seq.Next();
    for (int64_t i = 0; i < streams; ++i) {
      const auto target = seq.TargetAt(i, t);
      const __int128 ahead = __int128(seq.counts()[size_t(i)]) * target.den - target.num;  // (c - T) * den
      if (rule == MixtureRule::kTijdeman) {
        // |c - T| * den * b <= den * (b - 1); |ahead| < 2 den keeps it in range.
        ASSERT_LT(ahead, 2 * target.den) << "stream " << i << " at " << t << " of " << streams;
        ASSERT_GT(ahead, -2 * target.den) << "stream " << i << " at " << t << " of " << streams;
        const __int128 dev = ahead < 0 ? -ahead : ahead;
        ASSERT_LE(dev * b, target.den * (b - 1)) << "stream " << i << " at " << t << " of " << streams;
        continue;
      }
      ASSERT_LT(ahead, target.den) << "stream " << i << " at " << t;
      const __int128 below_bound = tight ? 1 : streams - 1;
      ASSERT_GT(ahead, -below_bound * target.den) << "stream " << i << " at " << t;
    }
  }
}

// Random weights (some zero, never all), random point spacing.
MixtureSchedule RandomSchedule(std::mt19937_64& gen, int64_t streams, int points, int64_t spacing,
                               MixtureInterpolation interpolation) {
  std::uniform_real_distribution<double> w(0, 1);
  MixtureSchedule s{{}, interpolation};
  int64_t at = 0;
  for (int k = 0; k < points; ++k) {
    std::vector<double> weights;
    for (int64_t i = 0; i < streams; ++i) weights.push_back(gen() % 3 == 0 ? 0.0 : w(gen));
    weights[size_t(k % streams)] += 0.5;
    s.points.push_back({at, weights});
    at += 1 + int64_t(gen() % uint64_t(spacing));
  }
  return s;
}

TEST(MixtureScheduleTest, CountsFollowTargetsWithinOneSample) {
  for (MixtureRule rule : {MixtureRule::kTijdeman, MixtureRule::kDeficit}) {
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> w(0, 1);
    for (int iter = 0; iter < 6; ++iter) {
      for (auto interpolation : {MixtureInterpolation::kStep, MixtureInterpolation::kLinear}) {
        MixtureSchedule s{{}, interpolation};
        int64_t at = 0;
        for (int k = 0; k < 6; ++k) {
          std::vector<double> weights{w(gen), w(gen), k == 3 ? 0.0 : w(gen)};
          if (k == 2) weights[0] = 0;
          s.points.push_back({at, weights});
          at += 1 + int64_t(gen() % 20000);
        }
        CheckBound(s, 3, at + 5000, true, rule);
      }
    }
    // The example, shortened.
    CheckBound(Schedule({{0, {0.7, 0.2, 0.1}}, {20000, {0.5, 0.3, 0.2}}}), 3, 40000, true, rule);
    CheckBound(Schedule({{0, {0.7, 0.2, 0.1}}, {20000, {0.5, 0.3, 0.2}}}, MixtureInterpolation::kLinear), 3, 40000,
               true, rule);
  }
}

// The property for any number of streams: 2..12 streams, random step and
// linear schedules, every prefix within 1 - 1/(2n - 2) samples of its target.
TEST(MixtureScheduleTest, TijdemanKeepsEveryCountWithinOneSampleForAnyNumberOfStreams) {
  std::mt19937_64 gen(39);
  for (int64_t streams = 2; streams <= 12; ++streams) {
    for (auto interpolation : {MixtureInterpolation::kStep, MixtureInterpolation::kLinear}) {
      for (int iter = 0; iter < 3; ++iter) {
        const MixtureSchedule s = RandomSchedule(gen, streams, 8, iter == 0 ? 40 : 3000, interpolation);
        CheckBound(s, streams, s.points.back().at + 2000, true);
      }
    }
  }
}

// Tijdeman's rule by its definition, position by position from the exact
// targets (TargetAt): eligible when T(t + 1) - c >= 1/b, then the least
// max(deadline, t + 1), the deadline being the first T' >= t + 1 whose
// target reaches c + 1 - 1/b; ties to the lowest index. The sequencer's
// incremental walk (mixture_tijdeman.cc) must give the same streams.
TEST(MixtureScheduleTest, TijdemanDrawMatchesItsDefinition) {
  std::mt19937_64 gen(3939);
  std::uniform_real_distribution<double> w(0.05, 1);
  for (int iter = 0; iter < 24; ++iter) {
    const int64_t streams = 2 + iter % 5;
    const auto interpolation = iter % 2 ? MixtureInterpolation::kLinear : MixtureInterpolation::kStep;
    MixtureSchedule s{{}, interpolation};
    int64_t at = 0;
    for (int k = 0; k < 4; ++k) {
      std::vector<double> weights;
      for (int64_t i = 0; i < streams; ++i) weights.push_back(k < 3 && gen() % 4 == 0 ? 0.0 : w(gen));
      weights[size_t(k % streams)] += 0.5;
      s.points.push_back({at, weights});
      at += 1 + int64_t(gen() % (iter % 3 == 0 ? 7 : 700));
    }
    auto q = QuantizeMixture(s, streams);
    ASSERT_TRUE(q.ok());
    MixtureSequencer seq(*q), targets(*q);
    const __int128 b = 2 * streams - 2;
    std::vector<int64_t> counts(size_t(streams), 0);
    for (int64_t t = 0; t < s.points.back().at + 600; ++t) {
      int64_t pick = -1, best = 0;
      for (int64_t i = 0; i < streams; ++i) {
        const __int128 c = counts[size_t(i)];
        const auto now = targets.TargetAt(i, t + 1);
        if ((now.num - c * now.den) * b < now.den) continue;
        int64_t due = t + 1;
        for (;; ++due) {
          const auto then = targets.TargetAt(i, due);
          if ((then.num - c * then.den) * b >= then.den * (b - 1)) break;
        }
        if (pick < 0 || due < best) {
          pick = i;
          best = due;
        }
      }
      ASSERT_EQ(seq.Next(), pick) << "position " << t << ", schedule " << iter;
      ++counts[size_t(pick)];
    }
  }
}

// Two streams take TijdemanDraw::DrawOfTwo's own path (stream 0's walker alone):
// it must pick as Pick and Drew do, over step and linear schedules with
// points 1 to 2^30 apart, zero weights and weights down to 1e-9.
TEST(MixtureScheduleTest, TwoStreamDrawPicksAsTheGeneralRule) {
  std::mt19937_64 gen(2939);
  for (int iter = 0; iter < 60; ++iter) {
    const auto interpolation = iter % 2 ? MixtureInterpolation::kLinear : MixtureInterpolation::kStep;
    MixtureSchedule s{{}, interpolation};
    int64_t at = 0;
    for (int k = 0; k < 5; ++k) {
      const double tiny = iter % 3 == 0 ? 1e-9 : 0.0;
      std::vector<double> weights{gen() % 4 == 0 ? tiny : double(gen() % 1000) + 1,
                                  gen() % 4 == 0 ? tiny : double(gen() % 1000) + 1};
      if (weights[0] + weights[1] == 0) weights[size_t(k % 2)] = 1;
      s.points.push_back({at, weights});
      at += 1 + int64_t(gen() % (iter % 4 == 0 ? 7 : iter % 4 == 1 ? 700 : iter % 4 == 2 ? 5000 : 1 << 30));
    }
    auto q = QuantizeMixture(s, 2);
    ASSERT_TRUE(q.ok());
    const bool linear = interpolation == MixtureInterpolation::kLinear;
    TijdemanDraw general(q->at, q->share, kMixtureScale, linear), two(q->at, q->share, kMixtureScale, linear);
    ASSERT_TRUE(two.two_streams());
    int64_t counts[2] = {0, 0}, draws[2] = {0, 0};
    const int64_t end = std::min<int64_t>(s.points.back().at + 3000, 200'000);
    for (int64_t t = 0; t < end; ++t) {
      const int64_t pick = general.Pick(t);
      general.Drew(pick, ++counts[pick]);
      ASSERT_EQ(two.DrawOfTwo(t, draws), pick) << "position " << t << ", schedule " << iter;
    }
    EXPECT_EQ(draws[0], counts[0]);
  }
}

// Seven streams: the largest deficit is only proven within streams - 1
// samples below its target (README); Tijdeman's rule within 1 - 1/12.
TEST(MixtureScheduleTest, DeficitRuleNeverRunsAheadWithManyStreams) {
  std::mt19937_64 gen(11);
  for (auto interpolation : {MixtureInterpolation::kStep, MixtureInterpolation::kLinear}) {
    const MixtureSchedule s = RandomSchedule(gen, 7, 8, 3000, interpolation);
    CheckBound(s, 7, s.points.back().at + 1000, false, MixtureRule::kDeficit);
    CheckBound(s, 7, s.points.back().at + 1000, true, MixtureRule::kTijdeman);
  }
}

TEST(MixtureScheduleTest, RuleNames) {
  EXPECT_EQ(*ParseMixtureRule("tijdeman"), MixtureRule::kTijdeman);
  EXPECT_EQ(*ParseMixtureRule("deficit"), MixtureRule::kDeficit);
  EXPECT_EQ(MixtureRuleName(MixtureRule::kTijdeman), "tijdeman");
  EXPECT_EQ(MixtureRuleName(MixtureRule::kDeficit), "deficit");
  auto bad = ParseMixtureRule("fair");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "ValueError: mixture_rule must be 'tijdeman' or 'deficit', got 'fair'");
  EXPECT_EQ(MixtureSchedule{}.rule, MixtureRule::kTijdeman);
}

TEST(MixtureScheduleTest, SkipToMatchesNext) {
  auto q = QuantizeMixture(Schedule({{0, {3, 1}}, {50, {1, 1}}, {90, {0, 1}}}, MixtureInterpolation::kLinear), 2);
  ASSERT_TRUE(q.ok());
  MixtureSequencer a(*q);
  for (int i = 0; i < 70; ++i) a.Next();
  MixtureSequencer b(*q);
  b.SkipTo(70);
  EXPECT_EQ(b.position(), 70);
  EXPECT_EQ(a.counts(), b.counts());
  for (int i = 0; i < 60; ++i) ASSERT_EQ(a.Next(), b.Next());
}

TEST(MixtureScheduleTest, ValidationErrors) {
  EXPECT_EQ(Error(Schedule({}), 2), "ValueError: mixture: the schedule has no points");
  EXPECT_EQ(Error(Schedule({{0, {1, 2}}, {5, {1}}}), 2), "ValueError: mixture: point 1 has 1 weights for 2 streams");
  EXPECT_EQ(Error(Schedule({{0, {1, -0.5}}}), 2), "ValueError: mixture: point 0's weight 1 is negative (-0.5)");
  EXPECT_EQ(Error(Schedule({{0, {1, NAN}}}), 2), "ValueError: mixture: point 0's weight 1 is not a finite number");
  EXPECT_EQ(Error(Schedule({{0, {1, INFINITY}}}), 2),
            "ValueError: mixture: point 0's weight 1 is not a finite number");
  EXPECT_EQ(Error(Schedule({{0, {1, 1}}, {7, {0, 0}}}), 2), "ValueError: mixture: point 1's weights are all zero");
  EXPECT_EQ(Error(Schedule({{3, {1, 1}}}), 2), "ValueError: mixture: the first point must be at 0 samples seen, got 3");
  EXPECT_EQ(Error(Schedule({{0, {1, 1}}, {100, {1, 1}}, {100, {1, 2}}}), 2),
            "ValueError: mixture: points must be strictly increasing in samples seen: point 2 at 100 follows point "
            "1 at 100");
  EXPECT_EQ(Error(Schedule({{0, {1, 1}}, {(int64_t{1} << 36) + 1, {1, 2}}}), 2),
            "ValueError: mixture: point 1 at 68719476737 is beyond the planner's limit of 68719476736 samples");
  EXPECT_EQ(Error(Schedule({{0, {1e308, 1e308}}}), 2),
            "ValueError: mixture: point 0's weights sum beyond the range of a double");
  auto bad = ParseMixtureInterpolation("cubic");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "ValueError: mixture_interpolation must be 'step' or 'linear', got 'cubic'");
  EXPECT_EQ(*ParseMixtureInterpolation("linear"), MixtureInterpolation::kLinear);
}

}  // namespace
}  // namespace sluice::planner

// A mixture schedule changed at a checkpoint, the past kept
// (PlanConfig::mixture_past): the epoch is the old plan up to the change,
// then the new schedule's continuation, in which each stream goes on with
// its passes where it stopped and the counts after the change follow the
// new schedule's weights from the change on. Hand-checked ids, the
// properties over a shuffled three-stream epoch with two changes, and the
// checks of a past schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "engine/planner/mixture_plan.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_json.h"
#include "tests/engine/planner/mixture_request.h"
#include "tests/engine/planner/orig_sequence.h"

namespace sluice::planner {
namespace {

using Change = PlanConfig::MixtureChange;

constexpr auto Request = &testing::MixtureRequest;
constexpr auto Sequence = &testing::MixtureSequenceOf;

// Stream A = ids 0..2, B = ids 3..4, unshuffled. (0: [1, 1]) draws A B A B;
// changed at 4 to (0: [1, 0]) (A alone from 4 on): A has drawn 2 of its 3
// samples, so it goes on with id 2, then its second pass 0 1 2. Replaying
// the new schedule from 0 instead would have A at its 4th draw (id 1).
TEST(MixtureChangeTest, HandCheckedIds) {
  const MixtureSchedule old_schedule{{{0, {1, 1}}}, MixtureInterpolation::kStep};
  PlanRequest q = Request({{2, 1}, {2}}, {{{0, {1, 0}}}, MixtureInterpolation::kStep}, 8);
  EXPECT_EQ(Sequence(q, 0, 8), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));  // the new one alone
  q.config.mixture_past = {Change{0, 4, old_schedule}};
  EXPECT_EQ(Sequence(q, 0, 8), (std::vector<int64_t>{0, 3, 1, 4, 2, 0, 1, 2}));
  auto ids = PlanWorker(q, 0, 0, 0);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, (std::vector<int64_t>{0, 3, 1, 4, 2, 0, 1, 2}));
  // Resumed at 5 on two nodes: positions 5.. dealt alternately.
  q.sample_in_epoch = 5;
  q.world = World{2, 1, 1, {}, {}, {}};
  EXPECT_EQ(*PlanWorker(q, 0, 0, 0), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(*PlanWorker(q, 1, 0, 0), (std::vector<int64_t>{1, 0}));  // position 8 pads the ranks
  // A change recorded for another epoch does not touch this one.
  q.sample_in_epoch = 0;
  q.world = World{};
  q.config.mixture_past = {Change{1, 4, old_schedule}};
  EXPECT_EQ(Sequence(q, 0, 8), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
}

// A change in the middle of a linear segment: the weights there, cut as
// QuantizeMixture cuts, at the new position 0.
TEST(MixtureChangeTest, MixtureFromMidSegment) {
  auto q = QuantizeMixture({{{0, {1, 0}}, {4, {0, 1}}, {10, {1, 1}}}, MixtureInterpolation::kLinear}, 2);
  ASSERT_TRUE(q.ok());
  const int64_t Q = kMixtureScale;
  QuantizedMixture from1 = MixtureFrom(*q, 1);
  EXPECT_EQ(from1.at, (std::vector<int64_t>{0, 3, 9}));
  EXPECT_EQ(from1.share, (std::vector<std::vector<int64_t>>{{Q / 4 * 3, Q / 4}, {0, Q}, {Q / 2, Q / 2}}));
  QuantizedMixture from4 = MixtureFrom(*q, 4);  // on a point
  EXPECT_EQ(from4.at, (std::vector<int64_t>{0, 6}));
  EXPECT_EQ(from4.share, (std::vector<std::vector<int64_t>>{{0, Q}, {Q / 2, Q / 2}}));
  QuantizedMixture from12 = MixtureFrom(*q, 12);  // past the last point
  EXPECT_EQ(from12.at, (std::vector<int64_t>{0}));
  EXPECT_EQ(from12.share, (std::vector<std::vector<int64_t>>{{Q / 2, Q / 2}}));
  auto step = QuantizeMixture({{{0, {1, 0}}, {4, {0, 1}}}, MixtureInterpolation::kStep}, 2);
  EXPECT_EQ(MixtureFrom(*step, 2).share, (std::vector<std::vector<int64_t>>{{Q, 0}, {0, Q}}));
  EXPECT_EQ(MixtureFrom(*step, 2).at, (std::vector<int64_t>{0, 2}));
}

constexpr int64_t kEpoch = 420;
constexpr int64_t kFirst = 137, kSecond = 260;  // the changes

MixtureSchedule First() {
  return {{{0, {0.7, 0.2, 0.1}}, {150, {0.2, 0.3, 0.5}}, {300, {0.1, 0.8, 0.1}}}, MixtureInterpolation::kLinear};
}
MixtureSchedule Second() {
  return {{{0, {0.1, 0.1, 0.8}}, {200, {0.5, 0.5, 0}}}, MixtureInterpolation::kLinear};
}
MixtureSchedule Third() { return {{{0, {1, 2, 0}}, {300, {0, 1, 3}}}, MixtureInterpolation::kStep}; }

PlanRequest Shuffled(MixtureSchedule now, std::vector<Change> past) {
  PlanRequest q = testing::ShuffledMixtureRequest(std::move(now));  // kEpoch samples
  q.config.mixture_past = std::move(past);
  return q;
}

size_t StreamOf(int64_t id) { return id < 37 ? 0 : id < 87 ? 1 : 2; }

// First until 137, Second until 260, Third after: the sequence is First's
// plan up to 137, then the once-changed plan up to 260, then Third's
// continuation; each stream's draws over the epoch are its passes in order
// (no sample twice before its pass ends); after each change the counts of
// [change, t) follow that schedule's targets from the change within one
// sample; every world reads the same sequence, resumed at any position.
TEST(MixtureChangeTest, TwoChangesKeepThePast) {
  const PlanRequest first = Shuffled(First(), {});
  const PlanRequest once = Shuffled(Second(), {Change{1, kFirst, First()}});
  const PlanRequest twice = Shuffled(Third(), {Change{1, kFirst, First()}, Change{1, kSecond, Second()}});
  const std::vector<int64_t> a = Sequence(first, 0, kEpoch), b = Sequence(once, 0, kEpoch),
                             c = Sequence(twice, 0, kEpoch);
  ASSERT_EQ(c.size(), size_t(kEpoch));
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + kFirst, c.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.begin() + kSecond, c.begin()));
  EXPECT_FALSE(std::equal(a.begin() + kFirst, a.begin() + kSecond, b.begin() + kFirst));
  // Each stream: its draws are its passes, read on from where they stopped.
  auto d = DerivePlan(twice);
  ASSERT_TRUE(d.ok());
  const BatchContext ctx{twice, *d};
  std::array<std::vector<int64_t>, 3> drawn;
  for (int64_t id : c) drawn[StreamOf(id)].push_back(id);
  for (size_t s = 0; s < 3; ++s) {
    std::vector<int64_t> passes;
    for (int64_t p = 0; int64_t(passes.size()) < int64_t(drawn[s].size()); ++p) {
      auto pass = MixtureStreamPass(ctx, int64_t(s), p);
      ASSERT_TRUE(pass.ok());
      passes.insert(passes.end(), pass->begin(), pass->end());
    }
    EXPECT_TRUE(std::equal(drawn[s].begin(), drawn[s].end(), passes.begin())) << "stream " << s;
  }
  // The counts of each phase against its own schedule from its change on.
  struct Phase {
    MixtureSchedule schedule;
    int64_t from, to;
  };
  for (const Phase& phase : {Phase{Second(), kFirst, kSecond}, Phase{Third(), kSecond, kEpoch}}) {
    auto quantized = QuantizeMixture(phase.schedule, 3);
    ASSERT_TRUE(quantized.ok());
    MixtureSequencer targets(MixtureFrom(*quantized, phase.from));
    std::array<int64_t, 3> counts{};
    for (int64_t t = phase.from; t < phase.to; ++t) {
      ++counts[StreamOf(c[size_t(t)])];
      for (int64_t s = 0; s < 3; ++s) {
        const auto target = targets.TargetAt(s, t + 1 - phase.from);
        const __int128 diff = __int128(counts[size_t(s)]) * target.den - target.num;
        EXPECT_LT(diff, target.den) << "stream " << s << " ahead at " << t;
        EXPECT_GT(diff, -target.den) << "stream " << s << " behind at " << t;
      }
    }
  }
  // Every world, resumed anywhere (before, at and after each change).
  PlanRequest q = twice;
  for (int64_t t0 : {0L, 100L, kFirst, kFirst + 1, 200L, kSecond, kSecond + 3, 419L}) {
    q.sample_in_epoch = t0;
    for (auto [P, R, W, B] : {std::array<int64_t, 4>{1, 1, 1, 1}, {2, 2, 1, 2}, {1, 3, 2, 1}}) {
      q.world = World{P, R, W, {}, {}, {}};
      q.config.batch_size = B;
      auto work = PlanEpoch(q);
      ASSERT_TRUE(work.ok()) << work.status().ToString();
      std::vector<int64_t> seq = testing::OrigGlobalSequence(*work, work->ids.size());
      while (!seq.empty() && seq.back() == -1) seq.pop_back();
      const size_t n = std::min(seq.size(), size_t(kEpoch - t0));
      EXPECT_TRUE(std::equal(seq.begin(), seq.begin() + ptrdiff_t(n), c.begin() + t0)) << t0 << " " << P << R;
    }
  }
}

// The JSON form (sluice_plan_create, Python's plan()): the record's shape.
TEST(MixtureChangeTest, JsonForm) {
  auto q = ParsePlanRequest(R"({"streams": [{"shard_sizes": [2, 1]}, {"shard_sizes": [2]}], "epoch_size": 8,
      "batch_size": 1, "num_canonical_nodes": 1, "mixture": [[0, [1, 0]]], "mixture_past": [{"epoch": 0,
      "until": 4, "mixture": [[0, [1, 1]]], "mixture_interpolation": "step"}]})");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(*PlanWorker(*q, 0, 0, 0), (std::vector<int64_t>{0, 3, 1, 4, 2, 0, 1, 2}));
  auto bad = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}], "mixture": [[0, [1]]],
      "mixture_past": [{"epoch": 0, "mixture": [[0, [1]]]}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "ValueError: config key 'mixture_past': expected a list of {\"epoch\", \"until\", \"mixture\", "
            "\"mixture_interpolation\"}");
}

// "mixture_rule" (the rule a resumed state recorded) reaches the schedule
// and every phase; the linear three-stream schedule of
// mixture_schedule_test.cc differs between the rules at position 3.
TEST(MixtureChangeTest, JsonRule) {
  const std::string head = R"({"streams": [{"shard_sizes": [6]}, {"shard_sizes": [4]}, {"shard_sizes": [3]}],
      "epoch_size": 12, "batch_size": 1, "num_canonical_nodes": 1, "mixture": [[0, [1, 1, 2]], [8, [1, 1, 0]]],
      "mixture_interpolation": "linear")";
  auto tijdeman = ParsePlanRequest(head + "}");
  auto deficit = ParsePlanRequest(head + R"(, "mixture_rule": "deficit"})");
  ASSERT_TRUE(tijdeman.ok() && deficit.ok());
  EXPECT_EQ(tijdeman->config.mixture->rule, MixtureRule::kTijdeman);
  // Streams 2,0,1,0,1,2,0,1,0,1,0,1 and 2,0,1,2,0,1,0,1,0,1,0,1.
  EXPECT_EQ(*PlanWorker(*tijdeman, 0, 0, 0), (std::vector<int64_t>{10, 0, 6, 1, 7, 11, 2, 8, 3, 9, 4, 6}));
  EXPECT_EQ(*PlanWorker(*deficit, 0, 0, 0), (std::vector<int64_t>{10, 0, 6, 11, 1, 7, 2, 8, 3, 9, 4, 6}));
  auto bad = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}], "mixture_rule": "deficit"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "ValueError: config key 'mixture_rule': expected a 'mixture' beside it");
  auto unknown = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}], "mixture": [[0, [1]]],
      "mixture_rule": "fair"})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "ValueError: mixture_rule must be 'tijdeman' or 'deficit', got 'fair'");
}

TEST(MixtureChangeTest, PastScheduleChecks) {
  PlanRequest q = Request({{2}, {2}}, {{{0, {1, 1}}}, MixtureInterpolation::kStep}, 4);
  auto message = [&] {
    auto d = DerivePlan(q);
    return d.ok() ? std::string("ok") : d.status().message();
  };
  q.config.mixture_past = {Change{0, 2, {{{0, {1, 1, 1}}}, MixtureInterpolation::kStep}}};
  EXPECT_EQ(message(), "ValueError: mixture: the schedule replaced at 2 of epoch 0: point 0 has 3 weights for 2 streams");
  q.config.mixture_past = {Change{0, 2, {{{0, {1, 0}}}, MixtureInterpolation::kStep}},
                           Change{0, 2, {{{0, {0, 1}}}, MixtureInterpolation::kStep}}};
  EXPECT_EQ(message(),
            "ValueError: mixture: the schedule replaced at 2 of epoch 0 does not follow the previous change (at 2) "
            "within the planner's limit of 68719476736 samples");
  q.epoch = 1;  // another epoch's changes are not this one's
  EXPECT_EQ(message(), "ok");
}

}  // namespace
}  // namespace sluice::planner

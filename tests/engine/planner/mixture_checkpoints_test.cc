// Sequencer checkpoints: a sequencer or a run of phases restored from its
// counts at any position picks exactly as the walk from 0 (random step,
// linear and constant schedules, 2, 3 and 12 streams, both rules), and a
// plan (a worker's, a late resume's) made from the process's checkpoints
// reads the same ids as one walked from 0.
#include "engine/planner/mixture_checkpoints.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "mixture_request.h"

namespace sluice::planner {
namespace {

using testing::MixtureRequest;
using testing::MixtureSequenceOf;

enum class Shape { kConstant, kStep, kLinear };

// Random weights (some zero, never all) at random points; constant: the
// first point alone.
QuantizedMixture RandomMixture(std::mt19937_64& gen, int64_t streams, Shape shape, MixtureRule rule,
                               int64_t spacing) {
  std::uniform_real_distribution<double> w(0, 1);
  MixtureSchedule s{{}, shape == Shape::kLinear ? MixtureInterpolation::kLinear : MixtureInterpolation::kStep,
                    rule};
  int64_t at = 0;
  for (int k = 0; k < (shape == Shape::kConstant ? 1 : 5); ++k) {
    std::vector<double> weights;
    for (int64_t i = 0; i < streams; ++i) weights.push_back(gen() % 4 == 0 ? 0.0 : w(gen));
    weights[size_t(k % streams)] += 0.25;
    s.points.push_back({at, weights});
    at += 1 + int64_t(gen() % uint64_t(spacing));
  }
  auto q = QuantizeMixture(s, streams);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return *q;
}

// The picks of a walk from 0 and the counts before each position.
struct Walked {
  std::vector<int64_t> picks;
  std::vector<std::vector<int64_t>> counts;
};

Walked WalkFromZero(const QuantizedMixture& m, int64_t n) {
  MixtureSequencer seq(m);
  Walked out;
  for (int64_t t = 0; t < n; ++t) {
    out.counts.push_back(seq.counts());
    out.picks.push_back(seq.Next());
  }
  return out;
}

// Restored at position p from the walk's counts there, the next `ahead`
// picks and counts are the walk's.
void ExpectRestoredPicks(const QuantizedMixture& m, const Walked& walk, int64_t p, int64_t ahead,
                         const std::string& what) {
  MixtureSequencer seq(m, p, walk.counts[size_t(p)]);
  ASSERT_EQ(seq.position(), p);
  const int64_t end = std::min<int64_t>(p + ahead, int64_t(walk.picks.size()));
  for (int64_t t = p; t < end; ++t) {
    ASSERT_EQ(seq.counts(), walk.counts[size_t(t)]) << what << ", from " << p << ", at " << t;
    ASSERT_EQ(seq.Next(), walk.picks[size_t(t)]) << what << ", from " << p << ", at " << t;
  }
}

TEST(MixtureCheckpointsTest, RestoredSequencerPicksAsTheWalkFromZero) {
  std::mt19937_64 gen(3939);
  for (MixtureRule rule : {MixtureRule::kTijdeman, MixtureRule::kDeficit}) {
    for (Shape shape : {Shape::kConstant, Shape::kStep, Shape::kLinear}) {
      for (int64_t streams : {2, 3, 12}) {
        for (int iter = 0; iter < 3; ++iter) {
          const QuantizedMixture m = RandomMixture(gen, streams, shape, rule, iter == 0 ? 9 : 3000);
          const int64_t n = m.at.back() + 2000;
          const Walked walk = WalkFromZero(m, n);
          const std::string what = std::string(MixtureRuleName(rule)) + " shape " + std::to_string(int(shape)) +
                                   " streams " + std::to_string(streams) + " schedule " + std::to_string(iter);
          // Every point and its neighbours, then random positions.
          std::vector<int64_t> from{0, 1, n - 1};
          for (int64_t at : m.at) {
            for (int64_t d : {-1, 0, 1}) {
              if (at + d >= 0 && at + d < n) from.push_back(at + d);
            }
          }
          for (int k = 0; k < 40; ++k) from.push_back(int64_t(gen() % uint64_t(n)));
          for (int64_t p : from) ExpectRestoredPicks(m, walk, p, 400, what);
        }
      }
    }
  }
}

// Three phases (a schedule changed twice, the second change mid-segment of
// a linear schedule): a run restored from its state at any position picks
// as the run from 0, across the changes.
TEST(MixtureCheckpointsTest, RestoredRunPicksAsTheRunFromZeroAcrossPhases) {
  std::mt19937_64 gen(39);
  for (MixtureRule rule : {MixtureRule::kTijdeman, MixtureRule::kDeficit}) {
    for (int64_t streams : {2, 3, 12}) {
      std::vector<MixturePhase> phases{{0, RandomMixture(gen, streams, Shape::kLinear, rule, 700)},
                                       {900, RandomMixture(gen, streams, Shape::kStep, rule, 700)},
                                       {1777, RandomMixture(gen, streams, Shape::kLinear, rule, 700)}};
      const int64_t n = 4000;
      MixtureRun whole(phases);
      std::vector<MixtureRun::State> states;
      std::vector<int64_t> picks;
      for (int64_t t = 0; t < n; ++t) {
        states.push_back(whole.state());
        picks.push_back(whole.Next());
      }
      for (int64_t p : {int64_t{1}, int64_t{899}, int64_t{900}, int64_t{901}, int64_t{1776}, int64_t{1777},
                        int64_t{1778}, int64_t{2500}, n - 1}) {
        MixtureRun run(phases);
        run.Restore(states[size_t(p)]);
        ASSERT_EQ(run.position(), p);
        for (int64_t t = p; t < n; ++t) {
          ASSERT_EQ(run.Next(), picks[size_t(t)]) << MixtureRuleName(rule) << " " << streams << " from " << p;
        }
        EXPECT_EQ(run.counts(), whole.counts());
      }
    }
  }
}

TEST(MixtureCheckpointsTest, LatestIsTheLastCheckpointInTheRange) {
  EXPECT_EQ(MixtureCheckpoints(3, 1000).spacing(), 4096);
  EXPECT_EQ(MixtureCheckpoints(3, 1000).capacity(), 16384);
  EXPECT_EQ(MixtureCheckpoints(12, int64_t{1} << 36).spacing(), (int64_t{1} << 36) / 16384);
  // 8 MiB of counts: 16 bytes a stream a checkpoint.
  EXPECT_EQ(MixtureCheckpoints(1000, int64_t{1} << 36).capacity(), 524);
  EXPECT_EQ(MixtureCheckpoints(1000, int64_t{1} << 36).spacing(), ((int64_t{1} << 36) + 523) / 524);
  EXPECT_EQ(MixtureCheckpoints(int64_t{1} << 20, 100).capacity(), 1);
  MixtureCheckpoints table(2, 4096 * 3);
  ASSERT_EQ(table.spacing(), 4096);
  EXPECT_EQ(table.next(), 4096);
  for (int64_t k = 1; k <= 3; ++k) table.Append({k * 4096, {k, 4096 * k - k}, {0, k}});
  EXPECT_EQ(table.size(), 3);
  EXPECT_EQ(table.next(), 4 * 4096);
  EXPECT_FALSE(table.Latest(0, 4095));
  EXPECT_FALSE(table.Latest(8192, 12287));  // 8192 is not after 8192
  auto c = table.Latest(0, 12287);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->position, 8192);
  EXPECT_EQ(c->counts, (std::vector<int64_t>{2, 8190}));
  EXPECT_EQ(c->phase_counts, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(table.Latest(5, 100'000)->position, 12288);  // the last one held
  MixtureCheckpoints one(int64_t{1} << 20, 100);  // full after one checkpoint
  one.Append({4096, std::vector<int64_t>(size_t{1} << 20, 0), std::vector<int64_t>(size_t{1} << 20, 0)});
  EXPECT_EQ(one.next(), -1);
}

// Three shuffled streams, 300,000 positions under a linear schedule: the
// whole sequence walked from 0 with no checkpoints kept leaves a table of
// one checkpoint every 4096 positions; from it, a late resume reads the
// rest of that sequence and every worker reads what it read without.
TEST(MixtureCheckpointsTest, WorkerAndLateResumeFromCheckpointsReadAsFromZero) {
  const int64_t n = 300'000;
  for (MixtureRule rule : {MixtureRule::kTijdeman, MixtureRule::kDeficit}) {
    PlanRequest q = MixtureRequest({std::vector<int64_t>(60, 2000), std::vector<int64_t>(40, 1500),
                                    std::vector<int64_t>(20, 1000)},
                                   {{{0, {0.7, 0.2, 0.1}}, {n / 2, {0.2, 0.3, 0.5}}},
                                    MixtureInterpolation::kLinear,
                                    rule},
                                   n);
    q.config.shuffle = true;
    q.config.shuffle_seed = 17;
    q.config.num_canonical_nodes = 4;
    q.config.batch_size = 8;
    q.world.num_nodes = 2;
    q.world.ranks_per_node = 2;
    q.world.workers_per_rank = 3;
    DropMixtureCheckpoints();
    auto d = DerivePlan(q);
    ASSERT_TRUE(d.ok());
    const BatchContext ctx{q, *d};
    auto phases = MixtureRequestPhases(q);
    ASSERT_TRUE(phases.ok());
    // Workers from 0 (each walk of its own: nothing kept between them).
    std::vector<std::vector<int64_t>> cold;
    for (int64_t w = 0; w < 3; ++w) {
      DropMixtureCheckpoints();
      auto ids = MixtureWorker(ctx, 1, 0, w);
      ASSERT_TRUE(ids.ok());
      cold.push_back(*ids);
    }
    DropMixtureCheckpoints();
    const std::vector<int64_t> whole = MixtureSequenceOf(q, 0, n);
    auto table = SharedMixtureCheckpoints(*phases);
    ASSERT_TRUE(table);
    EXPECT_EQ(table->spacing(), 4096);
    EXPECT_EQ(table->size(), (n - 1) / 4096);
    for (int64_t p : {int64_t{4096}, int64_t{250'001}, n - 5}) {
      const std::vector<int64_t> rest = MixtureSequenceOf(q, p, n);
      EXPECT_TRUE(std::equal(rest.begin(), rest.end(), whole.begin() + p)) << "resumed at " << p;
    }
    for (int64_t w = 0; w < 3; ++w) {
      auto ids = MixtureWorker(ctx, 1, 0, w);
      ASSERT_TRUE(ids.ok());
      EXPECT_EQ(*ids, cold[size_t(w)]) << "worker " << w;
    }
    // A resumed epoch's worker, planned from the checkpoints.
    q.sample_in_epoch = 250'001;
    auto resumed = DerivePlan(q);
    ASSERT_TRUE(resumed.ok());
    const BatchContext late{q, *resumed};
    auto warm = MixtureWorker(late, 0, 1, 2);
    DropMixtureCheckpoints();
    auto walked = MixtureWorker(late, 0, 1, 2);
    ASSERT_TRUE(warm.ok() && walked.ok());
    EXPECT_FALSE(warm->empty());
    EXPECT_EQ(*warm, *walked);
  }
  DropMixtureCheckpoints();
}

// Workers planned at once on threads share the process's table (each may
// find none, grow one, keep it) and read what each reads alone.
TEST(MixtureCheckpointsTest, WorkersPlannedOnThreadsReadAsAlone) {
  const int64_t n = 100'000;
  PlanRequest q = MixtureRequest({std::vector<int64_t>(50, 1000), std::vector<int64_t>(50, 1000)},
                                 {{{0, {0.3, 0.7}}, {n / 2, {0.6, 0.4}}}, MixtureInterpolation::kLinear}, n);
  q.config.shuffle = true;
  q.world.workers_per_rank = 4;
  auto d = DerivePlan(q);
  ASSERT_TRUE(d.ok());
  const BatchContext ctx{q, *d};
  std::vector<std::vector<int64_t>> alone(4), together(4);
  for (int64_t w = 0; w < 4; ++w) {
    DropMixtureCheckpoints();
    alone[size_t(w)] = *MixtureWorker(ctx, 0, 0, w);
  }
  for (int round = 0; round < 2; ++round) {  // none kept, then kept
    if (round == 0) DropMixtureCheckpoints();
    std::vector<std::thread> threads;
    for (int64_t w = 0; w < 4; ++w) {
      threads.emplace_back([&, w] {
        auto ids = MixtureWorker(ctx, 0, 0, w);
        together[size_t(w)] = ids.ok() ? *ids : std::vector<int64_t>{};
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(together, alone) << "round " << round;
  }
  DropMixtureCheckpoints();
}

}  // namespace
}  // namespace sluice::planner

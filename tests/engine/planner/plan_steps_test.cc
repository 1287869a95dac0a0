// PlanSteps (plan_steps.h): the batches of global steps equal each rank's
// slice of the whole epoch's plan (PlanEpoch) dealt as torch's DataLoader
// deals them (DataLoaderBatches), over worlds, shuffles, replication and
// mid-epoch starts, for one rank or all; steps past the end are left out
// and a first step past the last is an error saying how many there are.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "engine/planner/plan.h"
#include "engine/planner/plan_steps.h"

namespace sluice::planner {
namespace {

PlanRequest Request(int64_t nodes, int64_t ranks, int64_t workers, ShuffleAlgo algo, bool shuffle) {
  PlanRequest q;
  q.streams.push_back({{26, 11, 26, 26, 12, 5, 40, 3}, {}});
  q.world = {nodes, ranks, workers, {}, {}, {}};
  q.config.batch_size = 3;
  q.config.shuffle = shuffle;
  q.config.shuffle_algo = algo;
  q.config.shuffle_block_size = 20;
  q.epoch = 1;
  return q;
}

// Every rank's steps from the whole epoch's work: steps[rank][step].
std::vector<std::vector<std::vector<int64_t>>> FromWholeEpoch(const PlanRequest& q) {
  auto work = PlanEpoch(q);
  EXPECT_TRUE(work.ok()) << work.status().ToString();
  std::vector<std::vector<std::vector<int64_t>>> out;
  const int64_t replication = q.config.replication.value_or(1);
  for (int64_t rank = 0; rank < q.world.num_nodes * q.world.ranks_per_node; ++rank) {
    const int64_t planning = rank / replication;  // replicas read their group's batches
    out.push_back(DataLoaderBatches(*work, planning / work->ranks(), planning % work->ranks()));
  }
  return out;
}

TEST(PlanStepsTest, EqualsTheWholeEpochDealtAsTheDataLoaderDeals) {
  int configs = 0;
  for (ShuffleAlgo algo : {ShuffleAlgo::kPy1e, ShuffleAlgo::kPy1s, ShuffleAlgo::kPy1br, ShuffleAlgo::kNaive})
    for (bool shuffle : {false, true})
      for (auto [nodes, ranks, workers] :
           std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 2, 2}, {1, 4, 3}, {4, 1, 2}})
        for (int64_t sample_in_epoch : {0, 24})
          for (int64_t replication : {1, 2}) {
            if (replication > nodes * ranks) continue;
            PlanRequest q = Request(nodes, ranks, workers, algo, shuffle);
            q.sample_in_epoch = sample_in_epoch;
            if (replication > 1) q.config.replication = replication;
            const auto whole = FromWholeEpoch(q);
            size_t most = 0;
            for (const auto& r : whole) most = std::max(most, r.size());
            const std::string what = "config " + std::to_string(configs);
            // All ranks, a range that runs past the end.
            auto got = PlanSteps(q, -1, 1, int64_t(most) + 5);
            ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
            std::vector<StepBatch> want;
            for (size_t s = 1; s < most; ++s)
              for (size_t r = 0; r < whole.size(); ++r)
                if (s < whole[r].size()) want.push_back({int64_t(s), int64_t(r), whole[r][s]});
            ASSERT_EQ(got->size(), want.size()) << what;
            for (size_t i = 0; i < want.size(); ++i) {
              EXPECT_EQ((*got)[i].step, want[i].step) << what;
              EXPECT_EQ((*got)[i].rank, want[i].rank) << what;
              EXPECT_EQ((*got)[i].ids, want[i].ids) << what << " step " << want[i].step;
            }
            // One rank, one step.
            const int64_t last_rank = nodes * ranks - 1;
            auto one = PlanSteps(q, last_rank, 2, 3);
            ASSERT_TRUE(one.ok()) << what << ": " << one.status().ToString();
            ASSERT_EQ(one->size(), 1u) << what;
            EXPECT_EQ((*one)[0].ids, whole[size_t(last_rank)][2]) << what;
            ++configs;
          }
  EXPECT_EQ(configs, 4 * 2 * 4 * 2 * 2 - 4 * 2 * 2);
}

TEST(PlanStepsTest, RefusesStepsPastTheEpochAndBadArguments) {
  PlanRequest q = Request(2, 2, 2, ShuffleAlgo::kPy1e, true);
  const auto whole = FromWholeEpoch(q);
  const int64_t steps = int64_t(whole[0].size());
  ASSERT_GT(steps, 3);
  auto past = PlanSteps(q, 0, steps, steps + 2);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message(), "steps start at step " + std::to_string(steps) +
                                         ", past the last: the rank takes " + std::to_string(steps) +
                                         " steps in epoch 1");
  q.sample_in_epoch = 12;
  past = PlanSteps(q, -1, 1000, 1001);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("each rank takes at most "), std::string::npos);
  EXPECT_NE(past.status().message().find(" steps in epoch 1 from sample 12"), std::string::npos);
  EXPECT_EQ(PlanSteps(q, 4, 0, 1).status().message(), "steps: rank 4 is outside the world's 4 ranks");
  EXPECT_EQ(PlanSteps(q, 0, 3, 3).status().message(), "steps 3 to 3 - 1: expected 0 <= first step < end");
  EXPECT_EQ(PlanSteps(q, 0, -1, 3).status().message(), "steps -1 to 3 - 1: expected 0 <= first step < end");
  q.config.batch_size.reset();
  EXPECT_EQ(PlanSteps(q, 0, 0, 1).status().message(), "steps: the plan has no batch_size");
}

}  // namespace
}  // namespace sluice::planner

// Test helpers for plans under a mixture schedule: a request of streams
// (their shard sizes) under a schedule, and the global sequence it plans.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/planner/mixture_plan.h"
#include "engine/planner/plan.h"

namespace sluice::planner::testing {

// One canonical node, batch 1, unshuffled; the caller sets the rest.
inline PlanRequest MixtureRequest(std::vector<std::vector<int64_t>> shards, MixtureSchedule mixture,
                                  int64_t epoch_size) {
  PlanRequest q;
  for (auto& s : shards) q.streams.push_back({std::move(s), {}});
  q.config.mixture = std::move(mixture);
  q.config.epoch_size = epoch_size;
  q.config.batch_size = 1;
  q.config.num_canonical_nodes = 1;
  return q;
}

// Three streams of 37, 50 and 23 samples (ids 0-36, 37-86, 87-109) over
// epoch 1 of 420 samples, shuffled by py1e (seed 1234, blocks of 16) over
// two canonical nodes.
inline PlanRequest ShuffledMixtureRequest(MixtureSchedule mixture) {
  PlanRequest q = MixtureRequest({{10, 7, 12, 8}, {20, 30}, {5, 9, 9}}, std::move(mixture), 420);
  q.config.shuffle = true;
  q.config.shuffle_seed = 1234;
  q.config.shuffle_block_size = 16;
  q.config.num_canonical_nodes = 2;
  q.epoch = 1;
  return q;
}

// Global sample ids of positions [begin, end) of the request's epoch.
inline std::vector<int64_t> MixtureSequenceOf(const PlanRequest& q, int64_t begin, int64_t end) {
  auto d = DerivePlan(q);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  if (!d.ok()) return {};
  const BatchContext ctx{q, *d};
  auto seq = MixtureSequence(ctx, begin, end);
  EXPECT_TRUE(seq.ok()) << seq.status().ToString();
  return seq.ok() ? *seq : std::vector<int64_t>{};
}

}  // namespace sluice::planner::testing

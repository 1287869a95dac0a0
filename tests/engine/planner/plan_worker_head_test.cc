// PlanWorkerHead (plan.h): a worker's first ids planned before the rest.
// - On a sweep of fresh configurations (shuffles py1e, py1s, py1b, py1br,
//   naive, py2s and none; random and per-stream batching; world shapes,
//   canonical nodes, block sizes, resumption points, several streams) the
//   head is exactly the start of PlanWorker's ids, for heads of one id, of
//   some ids and of more ids than the plan has (or all of them, `whole`,
//   for the shuffles and batchings without a head of their own); its
//   shuffle warning and errors are PlanWorker's.
// - One canonical node whose shuffle block is larger than the epoch (the
//   defaults of a one-process job: the whole epoch is one sorting window,
//   from which the head selects its ranks) at several resumption points.
#include <gtest/gtest.h>

#include <random>

#include "engine/planner/plan.h"

namespace sluice::planner {
namespace {

class HeadTestRandom {
 public:
  explicit HeadTestRandom(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }

 private:
  std::mt19937_64 gen_;
};

constexpr ShuffleAlgo kHeadTestAlgos[] = {ShuffleAlgo::kPy1e, ShuffleAlgo::kPy1s, ShuffleAlgo::kPy1b,
                                          ShuffleAlgo::kPy1br, ShuffleAlgo::kNaive, ShuffleAlgo::kPy2s};

PlanRequest HeadTestRequest(HeadTestRandom& rnd) {
  PlanRequest q;
  const int64_t C = rnd.Int(1, 8);
  const int64_t streams = rnd.Int(1, 3);
  const int64_t big = rnd.Int(0, 2);  // shard sizes up to 30, 300 or 3000
  for (int64_t s = 0; s < streams; ++s) {
    StreamSpec spec;
    const int64_t shards = rnd.Int(1, 10);
    for (int64_t i = 0; i < shards; ++i) spec.shard_sizes.push_back(rnd.Int(i == 0 ? 1 : 0, 30 * (big * 9 + 1)));
    if (streams > 1 && rnd.Int(0, 2) == 0) spec.weight.repeat = 0.5 + double(rnd.Int(0, 4)) * 0.25;
    q.streams.push_back(spec);
  }
  int64_t n = 0;
  for (auto& s : q.streams)
    for (int64_t z : s.shard_sizes) n += z;
  if (n < 2 * C) q.streams[0].shard_sizes[0] += 2 * C - n;
  q.config.num_canonical_nodes = C;
  q.config.shuffle = rnd.Int(0, 6) != 0;
  q.config.shuffle_algo = kHeadTestAlgos[rnd.Int(0, 5)];
  q.config.shuffle_seed = uint64_t(rnd.Int(0, 1 << 20));
  if (rnd.Int(0, 3) != 0) q.config.shuffle_block_size = rnd.Int(2, rnd.Int(0, 1) ? 100 : 3000);
  q.config.partition_algo = rnd.Int(0, 1) ? PartitionAlgo::kOrig : PartitionAlgo::kRelaxed;
  if (streams > 1 && rnd.Int(0, 5) == 0) q.config.batching_method = BatchingMethod::kPerStream;
  q.world.num_nodes = rnd.Int(1, 3);
  q.world.ranks_per_node = rnd.Int(1, 3);
  q.world.workers_per_rank = rnd.Int(1, 3);
  q.config.batch_size = rnd.Int(1, 6);
  q.epoch = rnd.Int(0, 3);
  return q;
}

bool HeadTestHeadFirst(const PlanConfig& c) {
  return c.batching_method == BatchingMethod::kRandom &&
         (!c.shuffle || c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s);
}

TEST(PlanWorkerHeadTest, IsTheStartOfTheWholePlan) {
  HeadTestRandom rnd(41);
  int planned = 0, failed = 0, resumed = 0, warned = 0, by_head = 0;
  int algo_seen[6] = {};
  for (int iter = 0; iter < 500; ++iter) {
    PlanRequest q = HeadTestRequest(rnd);
    auto d = DerivePlan(q);
    if (d.ok() && rnd.Int(0, 1) == 1) q.sample_in_epoch = rnd.Int(0, d->weighting.epoch_size);
    const World& w = q.world;
    for (int64_t p = 0; p < w.num_nodes; ++p)
      for (int64_t r = 0; r < w.ranks_per_node; ++r)
        for (int64_t k = 0; k < w.workers_per_rank; ++k) {
          std::optional<std::string> warning;
          auto whole = PlanWorker(q, p, r, k, &warning);
          const int64_t size = whole.ok() ? int64_t(whole->size()) : 0;
          for (int64_t count : {int64_t{1}, rnd.Int(1, size + 2), size + 5}) {
            std::optional<std::string> head_warning{"stale"};
            auto head = PlanWorkerHead(q, p, r, k, count, &head_warning);
            const std::string where = "iter " + std::to_string(iter) + " worker " + std::to_string(p) + "/" +
                                      std::to_string(r) + "/" + std::to_string(k) + " count " +
                                      std::to_string(count);
            if (!whole.ok()) {
              ASSERT_FALSE(head.ok()) << where;
              EXPECT_EQ(head.status().ToString(), whole.status().ToString()) << where;
              ++failed;
              continue;
            }
            ASSERT_TRUE(head.ok()) << where << ": " << head.status().ToString();
            // Without a head of its own the whole plan comes back.
            const int64_t n = HeadTestHeadFirst(q.config) ? std::min(count, size) : size;
            const std::vector<int64_t> expect(whole->begin(), whole->begin() + n);
            ASSERT_EQ(head->ids, expect) << where;
            ASSERT_EQ(head_warning, warning) << where;
            ASSERT_EQ(head->whole, !HeadTestHeadFirst(q.config) || count > size) << where;
            ++planned;
            by_head += !head->whole;
          }
          if (whole.ok()) {
            resumed += q.sample_in_epoch > 0;
            warned += warning.has_value();
            algo_seen[int(q.config.shuffle_algo)] += q.config.shuffle;
          }
        }
  }
  // The sweep covers what it says.
  EXPECT_GT(planned, 3000);
  EXPECT_GT(by_head, 1000);
  EXPECT_GT(failed, 0);
  EXPECT_GT(resumed, 300);
  EXPECT_GT(warned, 0);
  for (int a = 0; a < 6; ++a) EXPECT_GT(algo_seen[a], 20) << "algorithm " << a;
}

// One process's defaults: one canonical node, its block (4,000,000) larger
// than the epoch, so the head is selected from one window of the whole
// epoch; resumed at several points, and a world of several workers.
TEST(PlanWorkerHeadTest, OneWindowTheSizeOfTheEpoch) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes.assign(8, 7'500);
  s.shard_sizes[3] = 7'499;
  q.streams.push_back(s);
  q.config.num_canonical_nodes = 1;
  q.config.batch_size = 16;
  q.config.shuffle = true;
  q.epoch = 1;
  for (World world : {World{1, 1, 1, {}, {}, {}}, World{1, 2, 3, {}, {}, {}}}) {
    q.world = world;
    for (int64_t resume : {int64_t{0}, int64_t{17}, int64_t{31'000}, int64_t{59'990}}) {
      q.sample_in_epoch = resume;
      for (int64_t k = 0; k < world.workers_per_rank; ++k) {
        auto whole = PlanWorker(q, 0, world.ranks_per_node - 1, k);
        ASSERT_TRUE(whole.ok()) << whole.status().ToString();
        for (int64_t count : {1, 16, 700, 4096, 4097}) {  // a heap up to 4,096
          auto head = PlanWorkerHead(q, 0, world.ranks_per_node - 1, k, count);
          ASSERT_TRUE(head.ok()) << head.status().ToString();
          const size_t n = std::min(size_t(count), whole->size());
          ASSERT_EQ(head->ids, std::vector<int64_t>(whole->begin(), whole->begin() + n))
              << "resume " << resume << " worker " << k << " count " << count;
          EXPECT_EQ(head->whole, size_t(count) > whole->size());
        }
      }
    }
  }
}

}  // namespace
}  // namespace sluice::planner

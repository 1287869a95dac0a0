// The py1e direct path (each canonical node's shuffled ids written straight
// to their slots) against Mosaic's order of work (partition, whole
// permutation, remap) on many random configurations: node counts above and
// below the canonical count, ranks that need extension, resumption, short
// rows, resampled streams, one thread and two.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "engine/planner/batching.h"
#include "engine/planner/partition_orig.h"

namespace sluice::planner {
namespace {

class Random {
 public:
  explicit Random(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }

 private:
  std::mt19937_64 gen_;
};

PlanRequest RandomPy1eRequest(Random& rnd) {
  PlanRequest q;
  const int64_t C = rnd.Int(1, 12);
  const int64_t streams = rnd.Int(1, 3);
  for (int64_t s = 0; s < streams; ++s) {
    StreamSpec spec;
    const int64_t shards = rnd.Int(1, 8);
    for (int64_t i = 0; i < shards; ++i) spec.shard_sizes.push_back(rnd.Int(i == 0 ? 1 : 0, 60));
    if (streams > 1 && rnd.Int(0, 2) == 0) spec.weight.repeat = 0.5 + double(rnd.Int(0, 4)) * 0.25;
    q.streams.push_back(spec);
  }
  int64_t n = 0;
  for (auto& s : q.streams)
    for (int64_t z : s.shard_sizes) n += z;
  if (n < 2 * C) q.streams[0].shard_sizes[0] += 2 * C - n;
  q.config.num_canonical_nodes = C;
  q.config.batch_size = rnd.Int(1, 6);
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.config.shuffle_seed = uint64_t(rnd.Int(0, 1 << 20));
  q.config.shuffle_block_size = rnd.Int(2, 120);
  q.config.partition_algo = rnd.Int(0, 1) ? PartitionAlgo::kOrig : PartitionAlgo::kRelaxed;
  // Physical nodes: a divisor of C or a multiple of it.
  std::vector<int64_t> nodes;
  for (int64_t d = 1; d <= C; ++d)
    if (C % d == 0) nodes.push_back(d);
  nodes.push_back(2 * C);
  nodes.push_back(3 * C);
  q.world.num_nodes = nodes[size_t(rnd.Int(0, int64_t(nodes.size()) - 1))];
  q.world.ranks_per_node = rnd.Int(1, 4);
  q.world.workers_per_rank = rnd.Int(1, 3);
  q.sample_in_epoch = rnd.Int(0, 3) == 0 ? 0 : rnd.Int(0, 80);
  q.epoch = rnd.Int(0, 3);
  return q;
}

TEST(BatchRandomPy1eTest, EqualsPartitionShuffleRemap) {
  Random rnd(11);
  int direct = 0, resampled = 0, extended = 0, resumed = 0, runs = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    PlanRequest q = RandomPy1eRequest(rnd);
    q.threads = iter % 2 ? 1 : 0;
    auto derived = DerivePlan(q);
    ASSERT_TRUE(derived.ok()) << derived.status().ToString();
    const BatchContext ctx{q, *derived};
    auto res = Resample(ctx, -1);
    ASSERT_TRUE(res.ok());
    const PartitionArgs pa = RandomPartitionArgs(ctx, res->size());
    auto want = BatchRandomGeneric(ctx);
    if (!Py1eDirectApplies(ctx, pa)) {
      auto layout = OrigLayout::Make(pa);
      // Only pad columns, the tiny case and partition errors go the generic way.
      EXPECT_TRUE(!layout.ok() || !layout->plain()) << "iter " << iter;
      continue;
    }
    ++direct;
    resampled += !res->identity;
    extended += pa.num_samples % (pa.num_physical_nodes * pa.ranks_per_node) != 0;
    resumed += q.sample_in_epoch > 0;
    runs += pa.num_canonical_nodes == pa.num_physical_nodes * pa.ranks_per_node;  // contiguous-run deal
    auto got = BatchRandomPy1e(ctx, *res, pa);
    ASSERT_EQ(got.ok(), want.ok()) << "iter " << iter;
    if (!got.ok()) {
      EXPECT_EQ(got.status().ToString(), want.status().ToString());
      continue;
    }
    ASSERT_EQ(got->shape, want->shape) << "iter " << iter;
    ASSERT_EQ(got->ids, want->ids) << "iter " << iter;
  }
  // The draw covered what it should.
  EXPECT_GT(direct, 800);
  EXPECT_GT(resampled, 100);
  EXPECT_GT(extended, 200);
  EXPECT_GT(resumed, 300);
  EXPECT_GT(runs, 100);
}

// The benchmark's shape at 1.3M samples: 64 canonical nodes over 8 nodes x
// 8 ranks x 8 workers, spans of 130 ids, default block size; big enough for
// the two-thread pipeline.
TEST(BatchRandomPy1eTest, BenchmarkShapeBothThreadings) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes.assign(10000, 130);
  q.streams.push_back(s);
  q.config.num_canonical_nodes = 64;
  q.config.batch_size = 32;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.world = World{8, 8, 8, {}, {}, {}};
  q.epoch = 1;
  q.sample_in_epoch = 4096 * 3 + 17;
  auto derived = DerivePlan(q);
  ASSERT_TRUE(derived.ok());
  const BatchContext ctx{q, *derived};
  auto res = Resample(ctx, -1);
  ASSERT_TRUE(res.ok());
  const PartitionArgs pa = RandomPartitionArgs(ctx, res->size());
  ASSERT_TRUE(Py1eDirectApplies(ctx, pa));
  auto want = BatchRandomGeneric(ctx);
  ASSERT_TRUE(want.ok());
  for (int threads : {0, 1}) {
    q.threads = threads;
    auto got = BatchRandomPy1e(ctx, *res, pa);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->shape, want->shape);
    EXPECT_TRUE(got->ids == want->ids) << "threads " << threads;
  }
}

// One worker's plan (only the canonical nodes it reads are shuffled, the
// others' draws replayed or jumped over) is its slice of the whole array, at
// the benchmark's shape where spans are long and draws cross many blocks.
TEST(BatchRandomPy1eTest, WorkerPlanIsItsSliceAtScale) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes.assign(10000, 130);
  q.streams.push_back(s);
  q.config.num_canonical_nodes = 64;
  q.config.batch_size = 32;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.world = World{8, 8, 8, {}, {}, {}};
  q.epoch = 2;
  auto full = PlanEpoch(q);
  ASSERT_TRUE(full.ok());
  for (auto [p, r, w] : {std::array<int64_t, 3>{0, 0, 0}, {3, 5, 7}, {7, 7, 7}, {5, 0, 2}}) {
    auto mine = PlanWorker(q, p, r, w);
    ASSERT_TRUE(mine.ok());
    const int64_t* begin = full->ids.data() + full->Offset(p, r, w, 0, 0);
    std::vector<int64_t> expect(begin, begin + full->batches() * full->batch_size());
    std::erase(expect, -1);
    EXPECT_TRUE(*mine == expect) << p << " " << r << " " << w;
  }
}

}  // namespace
}  // namespace sluice::planner

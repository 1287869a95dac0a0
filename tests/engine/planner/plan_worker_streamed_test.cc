// One worker's py1e and py1s plans streamed part by part
// (plan_worker_streamed.cc, shuffle_py1e_stream.cc) against the whole plan:
// - Py1eStreamPart hands out exactly the whole part's sorted ids in any
//   [lo, hi), leaves the generator where the whole part leaves it, and
//   reports narrow blocks as Py1eDraw;
// - PlanWorker equals the worker's slice of PlanEpoch (and fails as it
//   fails) on a sweep of fresh configurations: world shapes, canonical node
//   counts, block sizes, seeds, epochs, several (resampled) streams,
//   mid-epoch resumption, resumption onto another node count;
// - the shuffle warning of a worker's plan is the whole epoch's;
// - with PlanCheckpoints (made once per epoch) the same plans and warning,
//   and checkpoints of another plan are refused.
#include <gtest/gtest.h>

#include <random>

#include "engine/planner/batching.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {
namespace {

class Random {
 public:
  explicit Random(uint64_t seed) : gen_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen_); }

 private:
  std::mt19937_64 gen_;
};

TEST(Py1eStreamPartTest, EqualsTheWholePartInAnyRange) {
  Random rnd(11);
  for (int iter = 0; iter < 400; ++iter) {
    std::vector<Span> spans;
    int64_t at = 0;
    const int64_t count = rnd.Int(1, 40);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t z = rnd.Int(i == 0 ? 1 : 0, rnd.Int(0, 3) == 0 ? 900 : 120);
      spans.push_back({at + 7, at + 7 + z});  // ids need not start at 0
      at += z;
    }
    const int64_t n = at;
    const BlockRange br = BlockBounds(rnd.Int(2, 600));
    const uint64_t seed = uint64_t(rnd.Int(0, 1 << 30));

    numpy::Generator whole_rng = MakeRng(seed);
    std::vector<int64_t> whole(static_cast<size_t>(n));
    Py1eScratch scratch;
    bool whole_narrow = false;
    ASSERT_TRUE(Py1eDraw(spans, br, whole_rng, whole.data(), scratch, 3, &whole_narrow).ok());
    Py1eSort(n, whole.data(), scratch);

    const int64_t lo = rnd.Int(0, n - 1), hi = rnd.Int(lo + 1, n);
    numpy::Generator rng = MakeRng(seed);
    std::vector<int64_t> got(static_cast<size_t>(n), -1);
    int64_t last_first = -1;
    auto sink = [&](int64_t first, const int64_t* ids, int64_t k) {
      ASSERT_GT(first, last_first);
      last_first = first;
      for (int64_t i = 0; i < k; ++i) {
        ASSERT_LT(first + i, n);
        got[size_t(first + i)] = ids[i];
      }
    };
    bool narrow = false;
    ASSERT_TRUE(Py1eStreamPart(spans, br, rng, 3, lo, hi, sink, &narrow, rnd.Int(1, 300)).ok());
    for (int64_t t = lo; t < hi; ++t) ASSERT_EQ(got[size_t(t)], whole[size_t(t)]) << "iter " << iter << " t " << t;
    EXPECT_EQ(narrow, whole_narrow) << "iter " << iter;
    // The same 32-bit half pending and the same words after.
    EXPECT_EQ(rng.bit_generator().NextU32(), whole_rng.bit_generator().NextU32()) << "iter " << iter;
    EXPECT_EQ(rng.bit_generator().NextU64(), whole_rng.bit_generator().NextU64()) << "iter " << iter;
  }
}

// A part inside one window (its block wider than it, as one canonical
// node's default; or any block, slid once) asked for a few ranks: they are
// selected, not sorted, with the whole part's ids, generator and narrow
// flag all the same.
TEST(Py1eStreamPartTest, FewRanksOfOneWindow) {
  Random rnd(12);
  int wide = 0;
  for (int iter = 0; iter < 80; ++iter) {
    std::vector<Span> spans;
    int64_t at = 0;
    const int64_t count = rnd.Int(1, 12);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t z = rnd.Int(i == 0 ? 1 : 0, 3000);
      spans.push_back({at + 3, at + 3 + z});
      at += z;
    }
    const int64_t n = at;
    const bool wider = rnd.Int(0, 3) != 0;
    wide += wider;
    const BlockRange br = BlockBounds(wider ? 4 * n + 8 : rnd.Int(2, 3000));
    const uint64_t seed = uint64_t(rnd.Int(0, 1 << 30));
    numpy::Generator whole_rng = MakeRng(seed);
    std::vector<int64_t> whole(static_cast<size_t>(n));
    Py1eScratch scratch;
    bool whole_narrow = false;
    ASSERT_TRUE(Py1eDraw(spans, br, whole_rng, whole.data(), scratch, 1, &whole_narrow).ok());
    Py1eSort(n, whole.data(), scratch);
    const int64_t lo = rnd.Int(0, n - 1), hi = std::min(n, lo + rnd.Int(1, std::max<int64_t>(1, n / 9)));
    numpy::Generator rng = MakeRng(seed);
    std::vector<int64_t> got(static_cast<size_t>(n), -1);
    auto sink = [&](int64_t first, const int64_t* ids, int64_t k) {
      for (int64_t i = 0; i < k; ++i) got[size_t(first + i)] = ids[i];
    };
    bool narrow = false;
    ASSERT_TRUE(Py1eStreamPart(spans, br, rng, 1, lo, hi, sink, &narrow, n).ok());
    for (int64_t t = lo; t < hi; ++t) ASSERT_EQ(got[size_t(t)], whole[size_t(t)]) << "iter " << iter << " t " << t;
    EXPECT_EQ(narrow, whole_narrow) << "iter " << iter;
    EXPECT_EQ(rng.bit_generator().NextU32(), whole_rng.bit_generator().NextU32()) << "iter " << iter;
    EXPECT_EQ(rng.bit_generator().NextU64(), whole_rng.bit_generator().NextU64()) << "iter " << iter;
  }
  EXPECT_GT(wide, 40);
}

TEST(Py1eStreamPartTest, MosaicErrors) {
  numpy::Generator rng = MakeRng(1);
  auto sink = [](int64_t, const int64_t*, int64_t) {};
  std::vector<Span> empty{{0, 0}};
  EXPECT_NE(Py1eStreamPart(empty, BlockBounds(4), rng, 5, 0, 1, sink).ToString().find(
                "The number of samples assigned to a canonical node is 0"),
            std::string::npos);
  std::vector<Span> one{{0, 3}};
  EXPECT_NE(Py1eStreamPart(one, BlockRange{3, 3}, rng, 5, 0, 1, sink).ToString().find("high <= low"),
            std::string::npos);
}

std::vector<int64_t> Divisors(int64_t c) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= c; ++d)
    if (c % d == 0) out.push_back(d);
  return out;
}

PlanRequest FreshRequest(Random& rnd) {
  PlanRequest q;
  const int64_t C = rnd.Int(1, 10);
  const int64_t streams = rnd.Int(1, 3);
  const int64_t big = rnd.Int(0, 2);  // shard sizes up to 30, 300 or 3000
  for (int64_t s = 0; s < streams; ++s) {
    StreamSpec spec;
    const int64_t shards = rnd.Int(1, 12);
    for (int64_t i = 0; i < shards; ++i) spec.shard_sizes.push_back(rnd.Int(i == 0 ? 1 : 0, 30 * (big * 9 + 1)));
    if (streams > 1 && rnd.Int(0, 2) == 0) spec.weight.repeat = 0.5 + double(rnd.Int(0, 4)) * 0.25;
    q.streams.push_back(spec);
  }
  int64_t n = 0;
  for (auto& s : q.streams)
    for (int64_t z : s.shard_sizes) n += z;
  if (n < 2 * C) q.streams[0].shard_sizes[0] += 2 * C - n;
  q.config.num_canonical_nodes = C;
  q.config.shuffle = true;
  q.config.shuffle_algo = rnd.Int(0, 3) == 0 ? ShuffleAlgo::kPy1s : ShuffleAlgo::kPy1e;
  q.config.shuffle_seed = uint64_t(rnd.Int(0, 1 << 20));
  q.config.shuffle_block_size = rnd.Int(2, rnd.Int(0, 1) ? 100 : 3000);
  q.config.partition_algo = rnd.Int(0, 1) ? PartitionAlgo::kOrig : PartitionAlgo::kRelaxed;
  q.world.ranks_per_node = rnd.Int(1, 4);
  q.world.workers_per_rank = rnd.Int(1, 4);
  int64_t B = rnd.Int(1, 6);
  const int64_t shape = rnd.Int(0, 3);
  if (shape == 0 && C > 1) {
    // Resumed onto a node count that neither divides nor is divided by C:
    // relaxed re-splits the initial run's global batches.
    q.config.partition_algo = PartitionAlgo::kRelaxed;
    const int64_t P0 = rnd.Int(1, C);
    int64_t P = rnd.Int(2, 9);
    while (C % P == 0 || P % C == 0) ++P;
    q.config.initial_physical_nodes = P0;
    q.world.num_nodes = P;
    B = P0 * rnd.Int(1, 3);  // the global batch P*R*B divides by P0*R
  } else if (shape == 1) {
    q.world.num_nodes = C * rnd.Int(2, 3);  // more nodes than canonical nodes
  } else {
    const auto d = Divisors(C);
    q.world.num_nodes = d[size_t(rnd.Int(0, int64_t(d.size()) - 1))];
  }
  q.config.batch_size = B;
  q.epoch = rnd.Int(0, 3);
  return q;
}

// Mosaic's whole-epoch narrow-block warning (py1e only), from the whole
// shuffle.
bool WholeEpochNarrow(const PlanRequest& q) {
  auto d = DerivePlan(q);
  EXPECT_TRUE(d.ok());
  const BatchContext ctx{q, *d};
  auto res = Resample(ctx, -1);
  EXPECT_TRUE(res.ok());
  auto perm = GetPartialShuffle(q.config.shuffle_algo, res->shuffle_units, d->num_canonical_nodes,
                                q.config.shuffle_seed, uint64_t(q.epoch), d->shuffle_block_size, {});
  EXPECT_TRUE(perm.ok());
  return perm.ok() && perm->py1e_narrow_block();
}

TEST(PlanWorkerPy1eTest, EqualsTheSliceOfTheWholePlan) {
  Random rnd(2026);
  int planned = 0, resumed = 0, elastic = 0, failed = 0, py1s = 0;
  for (int iter = 0; iter < 600; ++iter) {
    PlanRequest q = FreshRequest(rnd);
    auto d = DerivePlan(q);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const int64_t E = d->weighting.epoch_size;
    q.sample_in_epoch = rnd.Int(0, 2) == 0 ? 0 : rnd.Int(0, E);
    auto full = PlanEpoch(q);
    const World& w = q.world;
    if (!full.ok()) {
      ++failed;
      auto mine = PlanWorker(q, 0, 0, 0);
      ASSERT_FALSE(mine.ok()) << "iter " << iter;
      EXPECT_EQ(mine.status().ToString(), full.status().ToString()) << "iter " << iter;
      continue;
    }
    ++planned;
    py1s += q.config.shuffle_algo == ShuffleAlgo::kPy1s;
    resumed += q.sample_in_epoch > 0;
    elastic += q.config.initial_physical_nodes.has_value();
    const bool narrow = WholeEpochNarrow(q);
    // Checkpoints of the epoch made for another resumption point serve too.
    PlanRequest other = q;
    other.sample_in_epoch = 0;
    auto checkpoints = PlanCheckpoints(other);
    ASSERT_TRUE(checkpoints.ok()) << checkpoints.status().ToString();
    EXPECT_EQ(checkpoints->py1e_narrow_block, narrow);
    for (int64_t p = 0; p < w.num_nodes; ++p)
      for (int64_t r = 0; r < w.ranks_per_node; ++r)
        for (int64_t k = 0; k < w.workers_per_rank; ++k) {
          std::optional<std::string> warning;
          auto mine = PlanWorker(q, p, r, k, &warning);
          ASSERT_TRUE(mine.ok()) << mine.status().ToString();
          const int64_t* begin = full->ids.data() + full->Offset(p, r, k, 0, 0);
          std::vector<int64_t> expect(begin, begin + full->batches() * full->batch_size());
          std::erase(expect, -1);
          ASSERT_EQ(*mine, expect) << "iter " << iter << " worker " << p << "/" << r << "/" << k;
          ASSERT_EQ(warning.has_value(), narrow) << "iter " << iter;
          std::optional<std::string> warned;
          auto fast = PlanWorker(q, p, r, k, &warned, &*checkpoints);
          ASSERT_TRUE(fast.ok()) << fast.status().ToString();
          ASSERT_EQ(*fast, expect) << "iter " << iter << " worker " << p << "/" << r << "/" << k << " (checkpoints)";
          ASSERT_EQ(warned, warning) << "iter " << iter;
        }
    // Every worker of the world at once, last first (one pass over the
    // parts): each one's plan as PlanWorker gives it, with checkpoints and
    // without.
    std::vector<WorkerAt> all;
    for (int64_t p = w.num_nodes - 1; p >= 0; --p)
      for (int64_t r = w.ranks_per_node - 1; r >= 0; --r)
        for (int64_t k = w.workers_per_rank - 1; k >= 0; --k) all.push_back({p, r, k});
    for (const EpochCheckpoints* cp : {static_cast<const EpochCheckpoints*>(nullptr), static_cast<const EpochCheckpoints*>(&*checkpoints)}) {
      auto together = PlanWorkers(q, all, cp);
      ASSERT_TRUE(together.ok()) << together.status().ToString();
      ASSERT_EQ(together->size(), all.size());
      for (size_t i = 0; i < all.size(); ++i) {
        const int64_t* begin = full->ids.data() + full->Offset(all[i].node, all[i].rank, all[i].worker, 0, 0);
        std::vector<int64_t> expect(begin, begin + full->batches() * full->batch_size());
        std::erase(expect, -1);
        ASSERT_EQ((*together)[i], expect) << "iter " << iter << " worker " << i << (cp ? " (checkpoints)" : "");
      }
    }
  }
  // The sweep covers what it says.
  EXPECT_GT(planned, 400);
  EXPECT_GT(resumed, 200);
  EXPECT_GT(elastic, 40);
  EXPECT_GT(failed, 0);
  EXPECT_GT(py1s, 80);
}

// Parts far longer than the window (default block): the window slides
// thousands of times, parts before a worker's are drawn over, and a resumed
// worker skips the head of its part.
TEST(PlanWorkerPy1eTest, DefaultBlockOverLongParts) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes.assign(600, 5000);  // 3M samples
  s.shard_sizes[17] = 4321;
  q.streams.push_back(s);
  q.config.num_canonical_nodes = 4;
  q.config.batch_size = 8;
  q.config.shuffle = true;
  q.world = World{2, 2, 3, {}, {}, {}};
  q.epoch = 2;
  for (auto [algo, resume] : {std::pair{ShuffleAlgo::kPy1e, int64_t{0}}, {ShuffleAlgo::kPy1e, int64_t{1'700'003}},
                               {ShuffleAlgo::kPy1s, int64_t{1'700'003}}}) {
    q.config.shuffle_algo = algo;
    q.sample_in_epoch = resume;
    auto full = PlanEpoch(q);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    auto checkpoints = PlanCheckpoints(q);
    ASSERT_TRUE(checkpoints.ok()) << checkpoints.status().ToString();
    for (auto [p, r, k] : {std::array<int64_t, 3>{0, 0, 0}, {1, 1, 2}, {1, 0, 1}}) {
      auto mine = PlanWorker(q, p, r, k);
      ASSERT_TRUE(mine.ok()) << mine.status().ToString();
      const int64_t* begin = full->ids.data() + full->Offset(p, r, k, 0, 0);
      std::vector<int64_t> expect(begin, begin + full->batches() * full->batch_size());
      std::erase(expect, -1);
      ASSERT_EQ(*mine, expect) << "resume " << resume << " worker " << p << "/" << r << "/" << k;
      auto fast = PlanWorker(q, p, r, k, nullptr, &*checkpoints);
      ASSERT_TRUE(fast.ok()) << fast.status().ToString();
      ASSERT_EQ(*fast, expect) << "resume " << resume << " worker " << p << "/" << r << "/" << k << " (checkpoints)";
    }
  }
}

}  // namespace
}  // namespace sluice::planner

namespace sluice::planner {
namespace {

TEST(PlanCheckpointsTest, RefusedForAnotherPlan) {
  PlanRequest q;
  StreamSpec s;
  s.shard_sizes = {30, 40, 50};
  q.streams.push_back(s);
  q.config.batch_size = 2;
  q.config.shuffle = true;
  q.config.num_canonical_nodes = 2;
  q.world = World{2, 1, 1, {}, {}, {}};
  auto mine = PlanCheckpoints(q);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->node_start.size(), 2u);
  PlanRequest later = q;
  later.epoch = 1;
  auto refused = PlanWorker(later, 0, 0, 0, nullptr, &*mine);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().ToString().find("the epoch checkpoints were made for another plan"), std::string::npos);
  PlanRequest unshuffled = q;
  unshuffled.config.shuffle = false;
  EXPECT_EQ(PlanCheckpoints(unshuffled).status().code(), StatusCode::kInvalidArgument);
  unshuffled.config.shuffle = true;
  unshuffled.config.shuffle_algo = ShuffleAlgo::kNaive;
  EXPECT_EQ(PlanCheckpoints(unshuffled).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::planner

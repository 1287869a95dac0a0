// Plans under a mixture schedule: exact ids of a hand-checked case, each
// stream drawn pass by pass without repetition, the same global sequence
// for every world, one worker's plan equal to its slice, resumption at
// every position, and the request checks.
#include "engine/planner/mixture_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "engine/planner/plan.h"
#include "engine/planner/plan_json.h"
#include "tests/engine/planner/mixture_request.h"
#include "tests/engine/planner/orig_sequence.h"

namespace sluice::planner {
namespace {

// The epoch's sequence from the array, without the padding (-1) at its end.
std::vector<int64_t> GlobalSequence(const WorkArray& x) {
  const auto [P, R, W, NB, B] = x.shape;
  std::vector<int64_t> seq = testing::OrigGlobalSequence(x, P * R * W * NB * B);
  while (!seq.empty() && seq.back() == -1) seq.pop_back();
  return seq;
}

constexpr auto Request = &testing::MixtureRequest;
constexpr auto Sequence = &testing::MixtureSequenceOf;

void SetWorld(PlanRequest& q, int64_t P, int64_t R, int64_t W, int64_t B) {
  q.world = World{P, R, W, {}, {}, {}};
  q.config.batch_size = B;
}

// Stream A = ids 0..2 (shards [2, 1]), B = ids 3..4; (0: [1, 1]) then
// (4: [1, 3]) gives streams A B A B B A B B B A (mixture_schedule_test);
// unshuffled, A reads 0 1 2 then its second pass 0 ..., B reads 3 4 3 4 ...
TEST(MixturePlanTest, HandCheckedIds) {
  PlanRequest q = Request({{2, 1}, {2}}, {{{0, {1, 1}}, {4, {1, 3}}}, MixtureInterpolation::kStep}, 10);
  auto ids = PlanWorker(q, 0, 0, 0);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, (std::vector<int64_t>{0, 3, 1, 4, 3, 2, 4, 3, 4, 0}));
  // Two nodes of one rank, batch 2: global batches [0 3 1 4] [3 2 4 3] [4 0];
  // node 0 reads positions 0, 2, 4, ...
  SetWorld(q, 2, 1, 1, 2);
  auto node0 = PlanWorker(q, 0, 0, 0), node1 = PlanWorker(q, 1, 0, 0);
  ASSERT_TRUE(node0.ok() && node1.ok());
  EXPECT_EQ(*node0, (std::vector<int64_t>{0, 1, 3, 4, 4}));
  EXPECT_EQ(*node1, (std::vector<int64_t>{3, 4, 2, 3, 0}));
}

// The JSON form (`sluice plan`, the C ABI's plan calls, Python's work()).
TEST(MixturePlanTest, JsonForm) {
  auto q = ParsePlanRequest(R"({"streams": [{"shard_sizes": [2, 1]}, {"shard_sizes": [2]}], "epoch_size": 10,
      "batch_size": 1, "num_canonical_nodes": 1, "mixture": [[0, [1, 1]], [4, [1, 3]]]})");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto ids = PlanWorker(*q, 0, 0, 0);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<int64_t>{0, 3, 1, 4, 3, 2, 4, 3, 4, 0}));
  auto linear = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}, {"shard_sizes": [4]}], "epoch_size": 7,
      "batch_size": 1, "mixture": [[0, [1, 0]], [4, [0, 1]]], "mixture_interpolation": "linear"})");
  ASSERT_TRUE(linear.ok());
  // Streams 0 0 1 1 1 1 1 (mixture_schedule_test).
  EXPECT_EQ(*PlanWorker(*linear, 0, 0, 0), (std::vector<int64_t>{0, 1, 3, 4, 5, 6, 3}));
  auto bad = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}], "mixture": [[0, 1]]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "ValueError: config key 'mixture': expected a list of [samples seen, [weights]] points");
  auto alone = ParsePlanRequest(R"({"streams": [{"shard_sizes": [3]}], "mixture_interpolation": "step"})");
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().message(),
            "ValueError: config key 'mixture_interpolation': expected a 'mixture' beside it");
}

// A stream of 4 samples over 2 canonical nodes, unshuffled: node 0 holds
// positions 0-1, node 1 positions 2-3, read column by column.
TEST(MixturePlanTest, StreamReadAcrossCanonicalNodes) {
  PlanRequest q = Request({{1}, {3, 1}}, {{{0, {0, 1}}}, MixtureInterpolation::kStep}, 6);
  q.config.num_canonical_nodes = 2;
  EXPECT_EQ(Sequence(q, 0, 6), (std::vector<int64_t>{1, 3, 2, 4, 1, 3}));
  // Three canonical nodes over 4 samples: [0,1) [1,2) [2,4) -> 0 1 2, then 3.
  q.config.num_canonical_nodes = 3;
  EXPECT_EQ(Sequence(q, 0, 5), (std::vector<int64_t>{1, 2, 3, 4, 1}));
}

PlanRequest Shuffled() {
  return testing::ShuffledMixtureRequest(
      {{{0, {0.7, 0.2, 0.1}}, {150, {0.2, 0.3, 0.5}}, {300, {0.1, 0.8, 0.1}}}, MixtureInterpolation::kLinear});
}

// Each stream's draws, cut at every len(stream) draws, are permutations of
// its ids, and its first pass is its Mosaic shuffle read across canonical
// nodes; the second pass is shuffled differently.
TEST(MixturePlanTest, EachStreamDrawnPassByPassWithoutRepetition) {
  const PlanRequest q = Shuffled();
  const std::vector<int64_t> seq = Sequence(q, 0, 420);
  const std::vector<int64_t> first{0, 37, 87}, size{37, 50, 23};
  std::vector<std::vector<int64_t>> drawn(3);
  for (int64_t id : seq) {
    const size_t s = id < 37 ? 0 : id < 87 ? 1 : 2;
    drawn[s].push_back(id);
  }
  auto d = DerivePlan(q);
  ASSERT_TRUE(d.ok());
  const BatchContext ctx{q, *d};
  for (size_t s = 0; s < 3; ++s) {
    ASSERT_GT(int64_t(drawn[s].size()), size[s]) << "stream " << s << " should start a second pass";
    for (size_t at = 0; at < drawn[s].size(); at += size_t(size[s])) {
      std::vector<int64_t> pass(drawn[s].begin() + ptrdiff_t(at),
                                drawn[s].begin() + ptrdiff_t(std::min(drawn[s].size(), at + size_t(size[s]))));
      auto expect = MixtureStreamPass(ctx, int64_t(s), int64_t(at / size_t(size[s])));
      ASSERT_TRUE(expect.ok());
      EXPECT_TRUE(std::equal(pass.begin(), pass.end(), expect->begin())) << "stream " << s << " pass at " << at;
      std::sort(pass.begin(), pass.end());
      EXPECT_EQ(std::adjacent_find(pass.begin(), pass.end()), pass.end()) << "a sample twice in one pass";
    }
    // Pass 0: the stream's own py1e shuffle (epoch 1), canonical node 0's
    // positions [0, n/2) and node 1's [n/2, n) read alternately.
    auto perm = GetShuffle(ShuffleAlgo::kPy1e, q.streams[s].shard_sizes, 2, 1234, 1, 16);
    ASSERT_TRUE(perm.ok());
    const int64_t n = size[s], half = n / 2;
    std::vector<int64_t> mosaic;
    for (int64_t j = 0; j < n - half; ++j) {
      if (j < half) mosaic.push_back(first[s] + (*perm)[size_t(j)]);
      mosaic.push_back(first[s] + (*perm)[size_t(half + j)]);
    }
    EXPECT_EQ(*MixtureStreamPass(ctx, int64_t(s), 0), mosaic) << "stream " << s;
    EXPECT_NE(*MixtureStreamPass(ctx, int64_t(s), 0), *MixtureStreamPass(ctx, int64_t(s), 1));
  }
}

// The same global sequence for 1 node x 1 rank as for 2 nodes x 2 ranks (and
// others, workers and batch sizes included); every worker's PlanWorker is
// its slice of PlanEpoch's array.
TEST(MixturePlanTest, SameSequenceForEveryWorld) {
  PlanRequest q = Shuffled();
  const std::vector<int64_t> reference = Sequence(q, 0, 420 + 64);
  struct Shape { int64_t P, R, W, B; };
  for (Shape w : {Shape{1, 1, 1, 1}, Shape{2, 2, 1, 1}, Shape{2, 2, 3, 4}, Shape{1, 4, 2, 5}, Shape{3, 1, 2, 7},
                  Shape{4, 2, 1, 3}}) {
    SetWorld(q, w.P, w.R, w.W, w.B);
    auto work = PlanEpoch(q);
    ASSERT_TRUE(work.ok()) << work.status().ToString();
    const std::vector<int64_t> seq = GlobalSequence(*work);
    const int64_t ranks = w.P * w.R;
    ASSERT_EQ(int64_t(seq.size()), (420 + ranks - 1) / ranks * ranks);
    EXPECT_TRUE(std::equal(seq.begin(), seq.end(), reference.begin())) << w.P << "x" << w.R << "x" << w.W;
    for (int64_t p = 0; p < w.P; ++p)
      for (int64_t r = 0; r < w.R; ++r)
        for (int64_t k = 0; k < w.W; ++k) {
          auto mine = PlanWorker(q, p, r, k);
          ASSERT_TRUE(mine.ok());
          const int64_t* begin = work->ids.data() + work->Offset(p, r, k, 0, 0);
          std::vector<int64_t> slice(begin, begin + work->batches() * work->batch_size());
          std::erase(slice, -1);
          EXPECT_EQ(*mine, slice) << "worker " << p << "/" << r << "/" << k;
        }
  }
}

// Resumed at any sample_in_epoch, the epoch is the rest of the
// uninterrupted sequence, on the original world and on another.
TEST(MixturePlanTest, ResumeAtEveryPosition) {
  PlanRequest q = Request({{3, 2}, {4}, {2, 2}}, {{{0, {1, 2, 1}}, {9, {3, 0, 1}}}, MixtureInterpolation::kLinear}, 23);
  q.config.shuffle = true;
  q.config.shuffle_block_size = 4;
  const std::vector<int64_t> whole = Sequence(q, 0, 40);
  for (int64_t t0 = 0; t0 <= 23; ++t0) {
    q.sample_in_epoch = t0;
    for (auto [P, R, W, B] : {std::array<int64_t, 4>{1, 1, 1, 1}, {2, 2, 1, 2}, {1, 3, 2, 1}}) {
      SetWorld(q, P, R, W, B);
      auto work = PlanEpoch(q);
      ASSERT_TRUE(work.ok()) << work.status().ToString();
      const std::vector<int64_t> seq = GlobalSequence(*work);
      const int64_t ranks = P * R;
      ASSERT_EQ(int64_t(seq.size()), (23 - t0 + ranks - 1) / ranks * ranks) << "t0 " << t0;
      EXPECT_TRUE(std::equal(seq.begin(), seq.end(), whole.begin() + t0)) << "t0 " << t0 << " world " << P << R;
    }
  }
  q.sample_in_epoch = 30;  // past the end: nothing left
  auto work = PlanEpoch(q);
  ASSERT_TRUE(work.ok());
  EXPECT_TRUE(GlobalSequence(*work).empty());
}

TEST(MixturePlanTest, RequestChecks) {
  PlanRequest q = Request({{2}, {2}}, {{{0, {1, 1}}}, MixtureInterpolation::kStep}, 4);
  auto message = [&] {
    auto d = DerivePlan(q);
    return d.ok() ? std::string("ok") : d.status().message();
  };
  EXPECT_EQ(message(), "ok");
  q.config.epoch_size.reset();
  EXPECT_EQ(message(),
            "ValueError: mixture: epoch_size is required with a mixture schedule (its points are samples seen in "
            "the epoch)");
  q.config.epoch_size = 4;
  q.streams[1].weight.proportion = 0.5;
  EXPECT_EQ(message(),
            "ValueError: mixture: stream 1 has a proportion; with a mixture schedule the schedule sets every "
            "stream's share");
  q.streams[1].weight = {};
  q.config.batching_method = BatchingMethod::kPerStream;
  EXPECT_EQ(message(),
            "ValueError: mixture: batching_method must be 'random' with a mixture schedule (the schedule decides "
            "the stream of every position), got 'per_stream'");
  q.config.batching_method = BatchingMethod::kRandom;
  q.config.mixture->points[0].weights.push_back(1);
  EXPECT_EQ(message(), "ValueError: mixture: point 0 has 3 weights for 2 streams");
  q.config.mixture->points[0].weights.pop_back();
  q.config.epoch_size = 0;
  EXPECT_EQ(message(), "ValueError: the epoch has no samples");
}

}  // namespace
}  // namespace sluice::planner

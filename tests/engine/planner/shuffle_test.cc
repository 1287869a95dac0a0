// get_shuffle against Mosaic's 212 recorded calls (order/units/shuffles.json)
// and the README's worked example.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/plan.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/shuffle_py1e.h"
#include "tests/engine/planner/json_test_util.h"

namespace sluice::planner {
namespace {

using testing::Ints;
using testing::Str;

TEST(ShuffleTest, MatchesMosaicUnitVectors) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(testing::MosaicOrderPath("units/shuffles.json"));
  int cases = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    simdjson::dom::element a = c["args"];
    SCOPED_TRACE(simdjson::minify(a));
    auto algo = ParseShuffleAlgo(Str(a["algo"]));
    ASSERT_TRUE(algo.ok());
    const auto units = Ints(a["shard_sizes"]);
    auto got = GetShuffle(*algo, units, int64_t(a["num_canonical_nodes"]), uint64_t(a["seed"]),
                          uint64_t(a["epoch"]), int64_t(a["block_size"]));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Ints(c["result"]));
    ++cases;
  }
  EXPECT_EQ(cases, 212);
}

TEST(ShuffleTest, ReadmeExample) {
  const std::vector<int64_t> units{3, 4, 5};
  auto run = [&](ShuffleAlgo algo) { return GetShuffle(algo, units, 2, 0, 0, 4).value(); };
  EXPECT_EQ(run(ShuffleAlgo::kNaive), (std::vector<int64_t>{9, 2, 7, 4, 5, 11, 0, 3, 6, 10, 8, 1}));
  EXPECT_EQ(run(ShuffleAlgo::kPy1s), (std::vector<int64_t>{9, 11, 10, 7, 8, 0, 1, 2, 4, 6, 3, 5}));
  EXPECT_EQ(run(ShuffleAlgo::kPy2s), (std::vector<int64_t>{10, 7, 8, 9, 11, 1, 0, 2, 5, 6, 3, 4}));
  EXPECT_EQ(run(ShuffleAlgo::kPy1br), (std::vector<int64_t>{8, 9, 10, 7, 11, 0, 1, 3, 4, 2, 6, 5}));
  EXPECT_EQ(run(ShuffleAlgo::kPy1e), (std::vector<int64_t>{9, 11, 10, 7, 8, 0, 2, 1, 6, 5, 3, 4}));
}

// py1b has no vectors: check it is a permutation that keeps each canonical
// node's samples inside that node's range and blocks inside block bounds.
TEST(ShuffleTest, Py1bIsBlockwisePermutation) {
  const std::vector<int64_t> units{7, 0, 13, 5, 9};
  auto got = GetShuffle(ShuffleAlgo::kPy1b, units, 2, 3, 1, 4);
  ASSERT_TRUE(got.ok());
  auto py1s = GetShuffle(ShuffleAlgo::kPy1s, units, 2, 3, 1, 4).value();
  std::vector<int64_t> sorted = *got;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(34);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(*got, py1s);
  EXPECT_FALSE(GetShuffle(ShuffleAlgo::kPy1b, units, 2, 3, 1, 0).ok());
}

TEST(ShuffleTest, Errors) {
  const std::vector<int64_t> units{3, 4, 5};
  // py1br block 1: integers(0, int(0.75)) = integers(0, 0) raises; py1e
  // block 0: integers(0, 0) per span.
  for (auto [algo, block] : {std::pair{ShuffleAlgo::kPy1br, 1}, std::pair{ShuffleAlgo::kPy1e, 0}}) {
    auto r = GetShuffle(algo, units, 2, 0, 0, block);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(SplitMosaicError(r.status()).type, "ValueError");
  }
  // py1e with a canonical node that has no samples.
  auto empty = GetShuffle(ShuffleAlgo::kPy1e, std::vector<int64_t>{1}, 2, 0, 0, 8);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(SplitMosaicError(empty.status()).type, "ValueError");
  EXPECT_EQ(SplitMosaicError(empty.status()).message,
            "The number of samples assigned to a canonical node is 0. This very likely indicates "
            "that the number of samples in this stream is less than the number of canonical "
            "nodes, which is 2. Please check your index.json file and ensure that your dataset "
            "has been written out correctly. If this was intended, reduce num_canonical_nodes.");
  auto bad = ParseShuffleAlgo("py3x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(SplitMosaicError(bad.status()).type, "KeyError");
  EXPECT_EQ(SplitMosaicError(bad.status()).message, "'py3x'");
  EXPECT_FALSE(GetShuffle(ShuffleAlgo::kPy1s, units, 0, 0, 0, 4).ok());
  EXPECT_FALSE(GetShuffle(ShuffleAlgo::kPy1s, std::vector<int64_t>{3, -1}, 1, 0, 0, 4).ok());
  EXPECT_FALSE(GetShuffle(ShuffleAlgo::kPy1s, units, int64_t{1} << 30, 0, 0, 4).ok());
  EXPECT_FALSE(GetShuffle(ShuffleAlgo::kPy1e, units, 1, 0, 0, int64_t{1} << 62).ok());
}

}  // namespace
}  // namespace sluice::planner

namespace sluice::planner {
namespace {

// Above 2^20 ids py1e sorts part i on a second thread while drawing part
// i+1; the result must equal the one-part-at-a-time evaluation, which is what
// GetPartialShuffle does when every position is requested.
TEST(ShuffleTest, Py1ePipelineEqualsSequential) {
  std::vector<int64_t> units(300, 3500);  // 1.05M ids
  units[7] = 0;
  auto whole = GetShuffle(ShuffleAlgo::kPy1e, units, 8, 9176, 2, 5000);
  ASSERT_TRUE(whole.ok());
  std::vector<int64_t> every(whole->size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = int64_t(i);
  auto partial = GetPartialShuffle(ShuffleAlgo::kPy1e, units, 8, 9176, 2, 5000, every);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->held(), int64_t(every.size()));
  partial->Map(every);
  EXPECT_EQ(every, *whole);
  // Only the part holding position 0 is computed for a single request.
  std::vector<int64_t> one{0, -1};
  auto just = GetPartialShuffle(ShuffleAlgo::kPy1e, units, 8, 9176, 2, 5000, one);
  ASSERT_TRUE(just.ok());
  EXPECT_EQ(just->held(), int64_t(whole->size() / 8));
  just->Map(one);
  EXPECT_EQ(one, (std::vector<int64_t>{(*whole)[0], -1}));
}

// A resumed reader asks for the tail of a part, or a run in its middle:
// py1e sorts only that run's buckets, and the values there are the whole
// permutation's, at the edges of the run too.
TEST(ShuffleTest, Py1eRequestedRunEqualsWholePermutation) {
  std::vector<int64_t> units(120, 4100);  // 492,000 ids, a part's coarse buckets hold 256
  units[3] = 17;
  auto whole = GetShuffle(ShuffleAlgo::kPy1e, units, 2, 17, 1, 262144);
  ASSERT_TRUE(whole.ok());
  const int64_t n = int64_t(whole->size());
  const int64_t half = n / 2;  // part 1 begins here
  for (auto [from, to] : {std::pair<int64_t, int64_t>{half + 123457, n}, {7, 8},
                          {1000, 1001 + 256 * 3}, {half - 1, half + 1}, {0, n}}) {
    std::vector<int64_t> want;
    for (int64_t x = from; x < to; ++x) want.push_back(x);
    want.push_back(-1);
    auto partial = GetPartialShuffle(ShuffleAlgo::kPy1e, units, 2, 17, 1, 262144, want);
    ASSERT_TRUE(partial.ok());
    std::vector<int64_t> got = want;
    partial->Map(got);
    for (size_t k = 0; k + 1 < want.size(); ++k) {
      ASSERT_EQ(got[k], (*whole)[size_t(want[k])]) << "position " << want[k] << " of run [" << from
                                                   << ", " << to << ")";
    }
    EXPECT_EQ(got.back(), -1);
  }
}

}  // namespace
}  // namespace sluice::planner

namespace sluice::planner {
namespace {

// When Mosaic's get_shuffle_py1e warns that shards are left unshuffled (a
// span's random block smaller than the span). The expectations are Mosaic's
// own answers for these arguments (its py1e run with warnings recorded);
// near the bound the answer changes with the epoch's draws. The partial
// shuffle says it whether it shuffles every part or skips them all.
TEST(ShuffleTest, Py1eNarrowBlockIsMosaicsWarning) {
  auto narrow = [](std::vector<int64_t> units, int64_t C, uint64_t seed, uint64_t epoch,
                   int64_t block) {
    std::vector<int64_t> every;
    for (int64_t u : units) {
      for (int64_t k = 0; k < u; ++k) every.push_back(int64_t(every.size()));
    }
    auto shuffled = GetPartialShuffle(ShuffleAlgo::kPy1e, units, C, seed, epoch, block, every);
    auto skipped = GetPartialShuffle(ShuffleAlgo::kPy1e, units, C, seed, epoch, block, {});
    EXPECT_TRUE(shuffled.ok() && skipped.ok());
    if (!shuffled.ok() || !skipped.ok()) return false;
    EXPECT_EQ(shuffled->py1e_narrow_block(), skipped->py1e_narrow_block());
    return shuffled->py1e_narrow_block();
  };
  const std::vector<int64_t> ten(10, 100), six(6, 100);
  EXPECT_TRUE(narrow(ten, 1, 1111, 0, 50));
  EXPECT_FALSE(narrow(ten, 1, 1111, 0, 1000));
  EXPECT_FALSE(narrow(ten, 1, 1111, 0, 134));  // every unit within the block's lower bound
  std::vector<bool> by_epoch;
  for (uint64_t e = 0; e < 6; ++e) by_epoch.push_back(narrow(six, 2, 7, e, 120));
  EXPECT_EQ(by_epoch, (std::vector<bool>{false, true, false, false, true, true}));
  by_epoch.clear();
  const std::vector<int64_t> uneven{150, 90, 130, 60, 110, 95, 170};
  for (uint64_t e = 0; e < 8; ++e) by_epoch.push_back(narrow(uneven, 3, 42, e, 140));
  EXPECT_EQ(by_epoch, (std::vector<bool>{true, true, true, true, false, true, true, true}));
}

// PlanWorker reports the warning of the epoch's whole shuffle, the same for
// every worker and for a resumed one (its parts are skipped, not drawn).
TEST(ShuffleTest, PlanWorkerReportsMosaicsShuffleWarning) {
  PlanRequest q;
  StreamSpec spec;
  spec.shard_sizes = std::vector<int64_t>(6, 100);
  q.streams.push_back(spec);
  q.config.num_canonical_nodes = 2;
  q.config.batch_size = 4;
  q.config.shuffle = true;
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.config.shuffle_seed = 7;
  q.config.shuffle_block_size = 120;
  q.world.workers_per_rank = 2;
  q.epoch = 1;
  const std::string text = "Shuffle block size was smaller than shard size for some shards. This" +
                           std::string(25, ' ') +
                           "will result in these shards not being shuffled with other shards. Set" +
                           std::string(25, ' ') +
                           "shuffle_block_size to a larger value for a higher quality shuffle.";
  // The warning PlanWorker gives for worker `w` (a stale value is cleared).
  auto warning = [&q](int64_t w) -> std::optional<std::string> {
    std::optional<std::string> said = "stale";
    auto ids = PlanWorker(q, 0, 0, w, &said);
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    if (ids.ok()) {
      EXPECT_EQ(*ids, *PlanWorker(q, 0, 0, w));  // the same plan either way
    }
    return said;
  };
  EXPECT_EQ(warning(0), text);
  EXPECT_EQ(warning(1), text);
  q.sample_in_epoch = 500;  // resumed: the worker reads only part 1's tail
  EXPECT_EQ(warning(0), text);
  q.sample_in_epoch = 0;
  q.epoch = 0;  // this epoch's draws give every span room
  EXPECT_EQ(warning(0), std::nullopt);
  q.epoch = 1;
  q.config.shuffle_algo = ShuffleAlgo::kPy1s;  // only py1e warns
  EXPECT_EQ(warning(0), std::nullopt);
  q.config.shuffle_algo = ShuffleAlgo::kPy1e;
  q.config.shuffle = false;
  EXPECT_EQ(warning(0), std::nullopt);
}

}  // namespace
}  // namespace sluice::planner

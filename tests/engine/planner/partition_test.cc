// get_partitions against Mosaic's 199 recorded calls (order/units/partitions.json),
// plus the README's worked examples and the one-worker slice.
#include <gtest/gtest.h>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/partition.h"
#include "engine/planner/partition_orig.h"
#include "tests/engine/planner/json_test_util.h"

namespace sluice::planner {
namespace {

using testing::Ints;
using testing::OptInt;
using testing::Str;

PartitionArgs ArgsFrom(simdjson::dom::element a) {
  PartitionArgs p;
  p.num_samples = int64_t(a["num_samples"]);
  p.num_canonical_nodes = int64_t(a["num_canonical_nodes"]);
  p.num_physical_nodes = int64_t(a["num_physical_nodes"]);
  p.ranks_per_node = int64_t(a["ranks_per_node"]);
  p.workers_per_rank = int64_t(a["workers_per_rank"]);
  p.batch_size = int64_t(a["batch_size"]);
  p.drop_first = int64_t(a["drop_first"]);
  p.initial_physical_nodes = OptInt(a["initial_physical_nodes"]);
  return p;
}

TEST(PartitionTest, MatchesMosaicUnitVectors) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(testing::MosaicOrderPath("units/partitions.json"));
  int cases = 0, errors = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    SCOPED_TRACE(simdjson::minify(c["args"]));
    const auto args = ArgsFrom(c["args"]);
    auto algo = ParsePartitionAlgo(Str(c["args"]["algo"]));
    ASSERT_TRUE(algo.ok());
    auto got = GetPartitions(*algo, args);
    ++cases;
    simdjson::dom::element err;
    if (c["error"].get(err) == simdjson::SUCCESS) {
      ++errors;
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
      const auto split = SplitMosaicError(got.status());
      EXPECT_EQ(split.type, Str(err["type"]));
      EXPECT_TRUE(testing::SameMessage(split.message, Str(err["message"]))) << split.message;
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const auto shape = Ints(c["shape"]);
    ASSERT_EQ(std::vector<int64_t>(got->shape.begin(), got->shape.end()), shape);
    EXPECT_EQ(got->ids, Ints(c["result"]));
    // Every worker's slice alone equals its part of the whole array.
    for (int64_t p = 0; p < shape[0]; ++p)
      for (int64_t r = 0; r < shape[1]; ++r)
        for (int64_t w = 0; w < shape[2]; ++w) {
          auto one = GetWorkerPartition(*algo, args, p, r, w);
          ASSERT_TRUE(one.ok()) << one.status().ToString();
          const int64_t* begin = got->ids.data() + got->Offset(p, r, w, 0, 0);
          ASSERT_EQ(*one, std::vector<int64_t>(begin, begin + shape[3] * shape[4]))
              << "p=" << p << " r=" << r << " w=" << w;
          // Its head: the batches up to the one with the head-th id.
          for (int64_t head : {int64_t{0}, int64_t{1}, int64_t{3}, shape[3] * shape[4] + 1}) {
            auto start = GetWorkerPartition(*algo, args, p, r, w, head);
            ASSERT_TRUE(start.ok()) << start.status().ToString();
            size_t end = 0;
            for (int64_t kept = 0; end < one->size() && kept < head; end += size_t(shape[4]))
              for (size_t s = end; s < end + size_t(shape[4]); ++s) kept += (*one)[s] >= 0;
            ASSERT_EQ(*start, std::vector<int64_t>(one->begin(), one->begin() + ptrdiff_t(end)))
                << "p=" << p << " r=" << r << " w=" << w << " head " << head;
          }
        }
  }
  EXPECT_EQ(cases, 199);
  EXPECT_GT(errors, 30);
}

TEST(PartitionTest, ReadmeWorkedExamples) {
  PartitionArgs a;
  a.num_samples = 11;
  a.num_canonical_nodes = 2;
  a.ranks_per_node = 2;
  a.workers_per_rank = 2;
  a.batch_size = 2;
  auto x = GetPartitions(PartitionAlgo::kOrig, a);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->ids, (std::vector<int64_t>{0, 1, 4, 4, 2, 3, -1, -1, 5, 6, 9, 10, 7, 8, -1, -1}));

  PartitionArgs b;
  b.num_samples = 10;
  b.num_canonical_nodes = 2;
  b.num_physical_nodes = 4;
  auto y = GetPartitions(PartitionAlgo::kOrig, b);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->ids, (std::vector<int64_t>{0, 2, 4, 5, 7, 9, 1, 3, 3, 6, 8, 8}));
}

TEST(PartitionTest, RejectsBadArguments) {
  PartitionArgs a;
  a.num_samples = 10;
  a.batch_size = 0;
  EXPECT_EQ(GetPartitions(PartitionAlgo::kOrig, a).status().code(), StatusCode::kInvalidArgument);
  a.batch_size = 1;
  a.num_samples = 0;
  EXPECT_EQ(GetPartitions(PartitionAlgo::kRelaxed, a).status().code(), StatusCode::kInvalidArgument);
  a.num_samples = 10;
  EXPECT_FALSE(GetWorkerPartition(PartitionAlgo::kOrig, a, 1, 0, 0).ok());
  auto bad = ParsePartitionAlgo("nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(SplitMosaicError(bad.status()).type, "KeyError");
  a.num_canonical_nodes = int64_t{1} << 40;
  EXPECT_FALSE(GetPartitions(PartitionAlgo::kOrig, a).ok());
  // More canonical nodes than samples is fine (Mosaic repeats samples), but a
  // count that would make the plan huge is refused instead of allocated.
  a.num_canonical_nodes = 40;
  EXPECT_TRUE(GetPartitions(PartitionAlgo::kOrig, a).ok());
  a.num_canonical_nodes = int64_t{1} << 22;
  auto huge = GetPartitions(PartitionAlgo::kOrig, a);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(SplitMosaicError(huge.status()).type, "ValueError");
  a.num_canonical_nodes = 1;
  a.batch_size = int64_t{1} << 31;  // one batch per worker would be 16 GiB
  EXPECT_FALSE(GetPartitions(PartitionAlgo::kOrig, a).ok());
}

// RankRun (the loop a worker's whole slice is filled by) against RankElem,
// the index function it steps through, for every run of every rank: worlds
// whose step is whole columns (R * P a multiple of C, the run's fast path)
// with short rows whose last column repeats the one before, and others.
TEST(PartitionTest, EveryRunOfARankIsItsElements) {
  int fast_with_short_rows = 0, layouts = 0;
  for (int64_t n : {7, 10, 11, 64, 65, 97})
    for (int64_t c : {1, 2, 3, 4, 8})
      for (int64_t p : {1, 2, 4})
        for (int64_t r : {1, 2, 3})
          for (int64_t drop : {0, 5, 13}) {
            PartitionArgs a;
            a.num_samples = n;
            a.num_canonical_nodes = c;
            a.num_physical_nodes = p;
            a.ranks_per_node = r;
            a.batch_size = 3;
            a.drop_first = drop;
            Result<OrigLayout> layout = OrigLayout::Make(a);
            if (!layout.ok()) continue;
            ++layouts;
            if (layout->plain() && (r * p) % c == 0 && n % c != 0) ++fast_with_short_rows;
            const int64_t len = layout->shape()[2] * layout->shape()[3] * layout->shape()[4];
            for (int64_t pn = 0; pn < p; ++pn)
              for (int64_t rk = 0; rk < r; ++rk)
                for (int64_t q0 = 0; q0 <= len; ++q0)
                  for (int64_t count : {1, 2, 3, 5, 17, 64}) {
                    std::vector<int64_t> got(size_t(count), -7);
                    layout->RankRun(pn, rk, q0, count, got.data());
                    for (int64_t i = 0; i < count; ++i) {
                      const int64_t q = q0 + i;
                      const int64_t want =
                          q < layout->rank_len() ? layout->RankElem(pn, rk, q) : -1;
                      ASSERT_EQ(got[size_t(i)], want)
                          << "N=" << n << " C=" << c << " P=" << p << " R=" << r << " drop=" << drop
                          << " node " << pn << " rank " << rk << " run " << q0 << "+" << count
                          << " at " << i;
                    }
                  }
          }
  EXPECT_GT(layouts, 500);
  EXPECT_GT(fast_with_short_rows, 50);
}

}  // namespace
}  // namespace sluice::planner

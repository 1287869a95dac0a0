// The elastic resume rule (engine/packing/pack_segments.h), hand-checked:
// the segments' JSON and its refusals, the rows each role consumed, the
// leftover of concat rows and how the next shape's roles share it.
#include "engine/packing/pack_segments.h"

#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PackSegments, ParseReadsEveryKeyAndNamesWhatIsWrong) {
  auto ok = ParsePackSegments(
      R"([{"nodes": 1, "ranks_per_node": 3, "workers": 2, "batch_size": 4, "rows": 24},
          {"nodes": 2, "ranks_per_node": 1, "workers": 1, "batch_size": 4, "rows": 0}])");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].roles(), 6);
  EXPECT_EQ((*ok)[0].rows, 24u);
  EXPECT_EQ((*ok)[1].roles(), 2);
  EXPECT_FALSE((*ok)[0].SameShape((*ok)[1]));
  EXPECT_EQ(ParsePackSegments("[]").status().message(),
            "pack segments: must be a non-empty JSON list");
  EXPECT_EQ(ParsePackSegments("[1]").status().message(),
            "pack segment 0: must be a JSON object");
  EXPECT_EQ(ParsePackSegments(R"([{"nodes": 0, "ranks_per_node": 1, "workers": 1,
                                   "batch_size": 1, "rows": 0}])")
                .status()
                .message(),
            "pack segment 0: 'nodes' must be an integer in 1..2^20");
  EXPECT_EQ(ParsePackSegments(R"([{"nodes": 1, "ranks_per_node": 1, "workers": 1,
                                   "batch_size": 1, "rows": -1}])")
                .status()
                .message(),
            "pack segment 0: 'rows' must be an integer in 0..2^63");
  EXPECT_EQ(ParsePackSegments(R"([{"nodes": 1, "ranks": 1}])").status().message(),
            "pack segment 0: 'ranks' is not a key (nodes, ranks_per_node, workers, batch_size, "
            "rows)");
  EXPECT_EQ(ParsePackSegments(R"([{"nodes": 1}])").status().message(),
            "pack segment 0: needs nodes, ranks_per_node, workers, batch_size and rows");
}

TEST(PackSegments, RoleRowsAreTheDataLoadersDealPerRank) {
  // 2 ranks, 2 workers, batches of 3: 14 rows per rank = batches to
  // workers 0, 1, 0, 1 and 2 rows of a fifth (worker 0's).
  PackSegment s{1, 2, 2, 3, 28};
  EXPECT_EQ(RoleRows(s, 0), 8u);  // rank 0 worker 0
  EXPECT_EQ(RoleRows(s, 1), 6u);
  EXPECT_EQ(RoleRows(s, 2), 8u);  // rank 1 worker 0
  EXPECT_EQ(RoleRows(s, 3), 6u);
}

TEST(PackSegments, ConcatLeftoverStartsWhereTheNextRowDoes) {
  // Documents of 3, 5 and 2 tokens (+ eos: 4, 6, 3), rows of 4.
  const std::map<int64_t, uint64_t> sizes{{10, 3}, {11, 5}, {12, 2}};
  auto tokens = [&](int64_t id) -> Result<uint64_t> { return sizes.at(id); };
  const std::vector<PackItem> items{{10, 0}, {11, 0}, {12, 0}};
  auto none = ConcatLeftover(items, 0, 4, true, tokens);
  EXPECT_EQ(*none, items);
  // One row: document 10 whole (4 tokens with its eos).
  EXPECT_EQ(*ConcatLeftover(items, 1, 4, true, tokens), (std::vector<PackItem>{{11, 0}, {12, 0}}));
  // Two rows: 8 tokens, 4 of them document 11's: its rest from token 4.
  EXPECT_EQ(*ConcatLeftover(items, 2, 4, true, tokens), (std::vector<PackItem>{{11, 4}, {12, 0}}));
  // Without eos: 3 + 5 tokens fill the two rows exactly.
  EXPECT_EQ(*ConcatLeftover(items, 2, 4, false, tokens), (std::vector<PackItem>{{12, 0}}));
  // An item that starts mid-document counts from its offset.
  EXPECT_EQ(*ConcatLeftover({{11, 4}, {12, 0}}, 1, 4, true, tokens),
            (std::vector<PackItem>{{12, 2}}));
  // More rows than tokens: nothing left.
  EXPECT_TRUE(ConcatLeftover(items, 9, 4, true, tokens)->empty());
  auto failing = [](int64_t id) -> Result<uint64_t> {
    return InvalidArgumentError("no sample " + std::to_string(id));
  };
  EXPECT_EQ(ConcatLeftover(items, 1, 4, true, failing).status().message(), "no sample 10");
}

TEST(PackSegments, LeftoversAreJoinedInRoleOrderAndCutIntoBlocks) {
  const std::vector<std::vector<PackItem>> left{{{1, 3}, {2, 0}}, {}, {{7, 1}, {8, 0}, {9, 0}}};
  const auto three = ShareLeftovers(left, 3);
  EXPECT_EQ(three, (std::vector<std::vector<PackItem>>{
                       {{1, 3}, {2, 0}}, {{7, 1}, {8, 0}}, {{9, 0}}}));
  const auto one = ShareLeftovers(left, 1);
  EXPECT_EQ(one, (std::vector<std::vector<PackItem>>{{{1, 3}, {2, 0}, {7, 1}, {8, 0}, {9, 0}}}));
  const auto seven = ShareLeftovers(left, 7);
  EXPECT_EQ(seven.size(), 7u);
  EXPECT_EQ(seven[4], (std::vector<PackItem>{{9, 0}}));
  EXPECT_TRUE(seven[5].empty());
}

}  // namespace
}  // namespace sluice

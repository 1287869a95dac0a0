// The elastic resume rule (engine/packing/pack_segments.h), hand-checked:
// the segments' JSON and its refusals, the rows each role consumed, the
// leftover of concat and bin rows, the rows items pack into, the rows a
// rank's roles consumed in the epoch's tail, and how the next shape's roles
// share the leftovers.
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

PackSpec SmallSpec(PackMethod method, bool drop_last) {
  PackSpec spec;
  spec.column = "tokens";
  spec.seq_len = 4;
  spec.eos_id = 0;
  spec.method = method;
  spec.bin_window = 3;
  spec.drop_last = drop_last;
  return spec;
}

TEST(PackSegments, BinLeftoverIsTheWindowsRowsNotConsumedThenTheWindowsAfter) {
  // Documents of 5, 1, 2 and 3 tokens (+ eos: 6, 2, 3, 4), rows of 4,
  // windows of 3. Window 0's pieces: 10 [0, 4), 10 [4, 6), 11, 12; first
  // fit decreasing: row 0 = 10 [0, 4); row 1 = 12; row 2 = 10 [4, 6), 11.
  // Window 1: 13 alone, row 3.
  const std::map<int64_t, uint64_t> sizes{{10, 5}, {11, 1}, {12, 2}, {13, 3}};
  auto tokens = [&](int64_t id) -> Result<uint64_t> { return sizes.at(id); };
  const PackSpec spec = SmallSpec(PackMethod::kBin, true);
  const std::vector<PackItem> items{{10, 0}, {11, 0}, {12, 0}, {13, 0}};
  EXPECT_EQ(*BinLeftover(items, 0, spec, tokens), items);
  EXPECT_EQ(*BinLeftover(items, 1, spec, tokens),
            (std::vector<PackItem>{{12, 0, 3}, {10, 4, 6}, {11, 0, 2}, {13, 0}}));
  EXPECT_EQ(*BinLeftover(items, 2, spec, tokens),
            (std::vector<PackItem>{{10, 4, 6}, {11, 0, 2}, {13, 0}}));
  EXPECT_EQ(*BinLeftover(items, 3, spec, tokens), (std::vector<PackItem>{{13, 0}}));
  EXPECT_TRUE(BinLeftover(items, 4, spec, tokens)->empty());
  EXPECT_TRUE(BinLeftover(items, 9, spec, tokens)->empty());
  // Pieces pack as they are: 10 [4, 6) and 11 fill one row together.
  const std::vector<PackItem> pieces{{10, 4, 6}, {11, 0, 2}};
  EXPECT_EQ(*ItemRows(pieces, UINT64_MAX, spec, tokens), 1u);
  EXPECT_TRUE(BinLeftover(pieces, 1, spec, tokens)->empty());
  const auto skip = BinSkipOf(items, 2, spec, tokens);
  EXPECT_EQ(skip->item, 0u);
  EXPECT_EQ(skip->rows, 2u);
  EXPECT_EQ(skip->sizes, (std::vector<uint64_t>{6, 2, 3}));
  EXPECT_EQ(BinSkipOf(items, 3, spec, tokens)->item, 3u);
  EXPECT_EQ(BinSkipOf(items, 4, spec, tokens)->item, 4u);
  EXPECT_EQ(*ItemRows(items, UINT64_MAX, spec, tokens), 4u);
  EXPECT_EQ(*ItemRows(items, 2, spec, tokens), 2u);
  EXPECT_EQ(ItemSize({10, 4, 6}, 5, true), 2u);
  EXPECT_EQ(ItemSize({10, 4}, 5, false), 1u);
}

TEST(PackSegments, ConcatItemRowsCountTheLastPartialRowUnlessDropped) {
  const std::map<int64_t, uint64_t> sizes{{10, 5}, {11, 1}, {12, 2}, {13, 3}};
  auto tokens = [&](int64_t id) -> Result<uint64_t> { return sizes.at(id); };
  const std::vector<PackItem> items{{10, 0}, {11, 0}, {12, 0}, {13, 0}};  // 15 tokens
  EXPECT_EQ(*ItemRows(items, UINT64_MAX, SmallSpec(PackMethod::kConcat, true), tokens), 3u);
  EXPECT_EQ(*ItemRows(items, UINT64_MAX, SmallSpec(PackMethod::kConcat, false), tokens), 4u);
  EXPECT_EQ(*ItemRows(items, 1, SmallSpec(PackMethod::kConcat, false), tokens), 1u);
  // Document 10 with its eos is 6 tokens: the second row starts at its 4th.
  EXPECT_EQ(*Leftover(items, 1, SmallSpec(PackMethod::kConcat, false), tokens),
            (std::vector<PackItem>{{10, 4}, {11, 0}, {12, 0}, {13, 0}}));
}

TEST(PackSegments, RankRoleRowsFollowTheDataLoaderInTheTail) {
  // 1 rank, 2 workers, batches of 2, 10 rows consumed: 3 batches to worker
  // 0 and 2 to worker 1 while both have rows.
  const PackSegment s{1, 1, 2, 2, 10};
  EXPECT_EQ(RankRoleRows(s, {6, 9}), (std::vector<uint64_t>{6, 4}));
  // Worker 0 had 2 rows: one batch, then worker 1 alone (rounds 1 to 3).
  EXPECT_EQ(RankRoleRows(s, {2, 9}), (std::vector<uint64_t>{2, 8}));
  // Worker 1 had 3: its second batch short, then worker 0 alone.
  EXPECT_EQ(RankRoleRows(s, {9, 3}), (std::vector<uint64_t>{7, 3}));
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

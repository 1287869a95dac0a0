#include "engine/packing/row_bounds.h"

#include <vector>

#include <gtest/gtest.h>

#include "engine/packing/pack_spec.h"
#include "engine/packing/row_packer.h"

namespace sluice {
namespace {

struct BoundsForTest {
  std::vector<int32_t> bounds;
  int32_t pieces;
};

BoundsForTest BoundsOfForTest(const std::vector<int32_t>& segments) {
  BoundsForTest b{std::vector<int32_t>(segments.size() + 1, -1), 0};
  b.pieces = RowBounds(segments, b.bounds);
  return b;
}

// Hand-checked: bin packing (seq_len 6, one window) of documents of sizes
// 3, 2, 1, 4 opens row A with the 4 and adds the 2, row B with the 3 and the 1.
TEST(RowBounds, BinRowsHandChecked) {
  auto spec = ParsePackSpec(
      R"({"column": "tokens", "seq_len": 6, "method": "bin", "bin_window": 4, "pad_id": 0})");
  ASSERT_TRUE(spec.ok());
  RowPacker p(*spec);
  p.Add(std::vector<int64_t>{1, 2, 3});
  p.Add(std::vector<int64_t>{4, 5});
  p.Add(std::vector<int64_t>{6});
  p.Add(std::vector<int64_t>{7, 8, 9, 10});
  std::vector<int64_t> tokens(6);
  std::vector<int32_t> segments(6), positions(6);
  ASSERT_TRUE(p.Pop(tokens.data(), segments.data(), positions.data(), nullptr));
  EXPECT_EQ(tokens, (std::vector<int64_t>{7, 8, 9, 10, 4, 5}));
  auto a = BoundsOfForTest(segments);
  EXPECT_EQ(a.bounds, (std::vector<int32_t>{0, 4, 6, 6, 6, 6, 6}));
  EXPECT_EQ(a.pieces, 2);
  ASSERT_TRUE(p.Pop(tokens.data(), segments.data(), positions.data(), nullptr));
  EXPECT_EQ(tokens, (std::vector<int64_t>{1, 2, 3, 6, 0, 0}));
  auto b = BoundsOfForTest(segments);
  EXPECT_EQ(b.bounds, (std::vector<int32_t>{0, 3, 4, 4, 4, 4, 4}));  // ends before the padding
  EXPECT_EQ(b.pieces, 2);
}

TEST(RowBounds, OnePieceManyPiecesAndPaddingOnly) {
  auto one = BoundsOfForTest({1, 1, 1, 1});
  EXPECT_EQ(one.bounds, (std::vector<int32_t>{0, 4, 4, 4, 4}));
  EXPECT_EQ(one.pieces, 1);
  auto many = BoundsOfForTest({1, 2, 3, 4});  // the most pieces a row holds: no repeat
  EXPECT_EQ(many.bounds, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(many.pieces, 4);
  auto none = BoundsOfForTest({0, 0, 0});
  EXPECT_EQ(none.bounds, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(none.pieces, 0);
}

}  // namespace
}  // namespace sluice

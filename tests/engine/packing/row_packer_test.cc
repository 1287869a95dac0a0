#include "engine/packing/row_packer.h"

#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

struct PackedRowForTest {
  std::vector<int64_t> tokens;
  std::vector<int32_t> segments, positions;
  RowStart start;
};

std::vector<PackedRowForTest> PopAllForTest(RowPacker& p, size_t len) {
  std::vector<PackedRowForTest> rows;
  while (true) {
    PackedRowForTest r{std::vector<int64_t>(len), std::vector<int32_t>(len),
                       std::vector<int32_t>(len), {}};
    if (!p.Pop(r.tokens.data(), r.segments.data(), r.positions.data(), &r.start)) break;
    rows.push_back(std::move(r));
  }
  return rows;
}

PackSpec ConcatSpecForTest(bool drop_last) {
  PackSpec s;
  s.column = "tokens";
  s.seq_len = 4;
  s.eos_id = 0;
  s.drop_last = drop_last;
  return s;
}

TEST(RowPackerConcat, JoinsWithEosAndCarriesTheRest) {
  RowPacker p(ConcatSpecForTest(true));
  p.Add(std::vector<int64_t>{1, 2, 3});
  p.Add(std::vector<int64_t>{4});
  p.Add(std::vector<int64_t>{5, 6, 7, 8, 9});
  // 1 2 3 0 | 4 0 5 6 | 7 8 9 0
  auto rows = PopAllForTest(p, 4);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].tokens, (std::vector<int64_t>{1, 2, 3, 0}));
  EXPECT_EQ(rows[1].tokens, (std::vector<int64_t>{4, 0, 5, 6}));
  EXPECT_EQ(rows[2].tokens, (std::vector<int64_t>{7, 8, 9, 0}));
  EXPECT_EQ(rows[1].segments, (std::vector<int32_t>{1, 1, 2, 2}));
  EXPECT_EQ(rows[1].positions, (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(rows[2].segments, (std::vector<int32_t>{1, 1, 1, 1}));
  EXPECT_EQ(rows[0].start, (RowStart{0, 0}));
  EXPECT_EQ(rows[1].start, (RowStart{1, 0}));
  EXPECT_EQ(rows[2].start, (RowStart{2, 2}));
  EXPECT_EQ(p.tokens_in(), 12u);
}

TEST(RowPackerConcat, LastPartialRowDroppedOrPadded) {
  for (bool drop : {true, false}) {
    RowPacker p(ConcatSpecForTest(drop));
    p.Add(std::vector<int64_t>{1, 2, 3, 4, 5});
    p.Finish();
    auto rows = PopAllForTest(p, 4);
    ASSERT_EQ(rows.size(), drop ? 1u : 2u);
    EXPECT_EQ(rows[0].tokens, (std::vector<int64_t>{1, 2, 3, 4}));
    if (!drop) {
      EXPECT_EQ(rows[1].tokens, (std::vector<int64_t>{5, 0, 0, 0}));
      EXPECT_EQ(rows[1].segments, (std::vector<int32_t>{1, 1, 0, 0}));
      EXPECT_EQ(rows[1].start, (RowStart{0, 4}));
      EXPECT_EQ(p.padding_out(), 2u);
    }
  }
}

TEST(RowPackerConcat, EmptyDocumentsKeepTheirNumbers) {
  PackSpec s = ConcatSpecForTest(true);
  s.eos_id = -1;
  RowPacker p(s);
  p.Add(std::vector<int64_t>{});
  p.Add(std::vector<int64_t>{7, 7});
  p.Add(std::vector<int64_t>{});
  p.Add(std::vector<int64_t>{8, 8, 8, 8});
  auto rows = PopAllForTest(p, 4);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tokens, (std::vector<int64_t>{7, 7, 8, 8}));
  EXPECT_EQ(rows[0].start, (RowStart{1, 0}));
}

TEST(RowPackerBin, FirstFitDecreasingPerWindow) {
  PackSpec s;
  s.column = "tokens";
  s.seq_len = 4;
  s.method = PackMethod::kBin;
  s.bin_window = 3;
  s.pad_id = 9;
  RowPacker p(s);
  p.Add(std::vector<int64_t>{1, 2, 3});
  p.Add(std::vector<int64_t>{4, 5});
  EXPECT_EQ(p.ready(), 0u);
  p.Add(std::vector<int64_t>{6});  // the window is full: sizes 3, 2, 1
  auto rows = PopAllForTest(p, 4);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokens, (std::vector<int64_t>{1, 2, 3, 6}));
  EXPECT_EQ(rows[0].segments, (std::vector<int32_t>{1, 1, 1, 2}));
  EXPECT_EQ(rows[0].positions, (std::vector<int32_t>{0, 1, 2, 0}));
  EXPECT_EQ(rows[1].tokens, (std::vector<int64_t>{4, 5, 9, 9}));
  EXPECT_EQ(rows[1].segments, (std::vector<int32_t>{1, 1, 0, 0}));
  EXPECT_EQ(rows[1].start, (RowStart{1, 0}));
  // A document longer than a row goes in row-sized pieces.
  p.Add(std::vector<int64_t>{7, 8, 9, 10, 11});
  p.Finish();
  rows = PopAllForTest(p, 4);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokens, (std::vector<int64_t>{7, 8, 9, 10}));
  EXPECT_EQ(rows[1].tokens, (std::vector<int64_t>{11, 9, 9, 9}));
  EXPECT_EQ(rows[1].positions, (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(rows[1].start, (RowStart{3, 4}));
  EXPECT_EQ(p.padding_out(), 5u);
  EXPECT_EQ(p.tokens_in(), 11u);
}

// A window's rows from its documents' sizes alone (the bin resume's count)
// are the rows packing it hands out: hand-checked, then over windows of
// varied documents (empty ones, ones longer than a row, with and without eos).
TEST(RowPackerBin, WindowRowsFromSizesAreThePackersRows) {
  EXPECT_EQ(RowPacker::BinWindowRows(std::vector<uint64_t>{3, 2, 1}, 4), 2u);  // {3,1}, {2}
  EXPECT_EQ(RowPacker::BinWindowRows(std::vector<uint64_t>{5}, 4), 2u);        // {4}, {1}
  EXPECT_EQ(RowPacker::BinWindowRows(std::vector<uint64_t>{}, 4), 0u);
  for (const int64_t eos : {int64_t{0}, int64_t{-1}}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      PackSpec s;
      s.column = "tokens";
      s.seq_len = 8;
      s.method = PackMethod::kBin;
      s.bin_window = 1000;  // one window: Finish packs it
      s.eos_id = eos;
      RowPacker p(s);
      std::vector<uint64_t> sizes;
      for (uint64_t d = 0; d < 5 + seed % 7; ++d) {
        const size_t n = (seed * 7 + d * 13) % 21;  // 0..20 tokens
        p.Add(std::vector<int64_t>(n, int64_t(d + 1)));
        sizes.push_back(n + (eos >= 0 ? 1 : 0));
      }
      p.Finish();
      EXPECT_EQ(RowPacker::BinWindowRows(sizes, 8), PopAllForTest(p, 8).size()) << seed;
    }
  }
}

}  // namespace
}  // namespace sluice

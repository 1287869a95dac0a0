// The parts a Parquet row group's piece is read in (PieceParts): their
// size for a piece read ahead and for one a consumer waits on, and the
// cut of the piece's reads, exact.
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/piece_parts.h"

namespace sluice {
namespace {

TEST(PiecePartSize, AWaitedOnPieceGoesInHalfTheRemotesParts) {
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_EQ(PiecePartSize(8 * mib, PieceUse::kAhead), 8 * mib);
  EXPECT_EQ(PiecePartSize(8 * mib, PieceUse::kWaitedOn), 4 * mib);
  EXPECT_EQ(PiecePartSize(3, PieceUse::kWaitedOn), 2u);
  // Never parts of no bytes.
  EXPECT_EQ(PiecePartSize(1, PieceUse::kWaitedOn), 1u);
  EXPECT_EQ(PiecePartSize(0, PieceUse::kWaitedOn), 1u);
  EXPECT_EQ(PiecePartSize(0, PieceUse::kAhead), 1u);
}

TEST(PieceParts, EachReadIsCutInPartsInFileOrderItsLastShorter) {
  std::vector<size_t> first;
  const std::vector<parquet::ByteRange> reads = {{4, 10}, {100, 4}, {200, 0}, {300, 5}};
  EXPECT_EQ(PieceParts(reads, 4, &first),
            (std::vector<DataSpan>{{4, 4}, {8, 4}, {12, 2}, {100, 4}, {200, 0}, {300, 4}, {304, 1}}));
  EXPECT_EQ(first, (std::vector<size_t>{0, 3, 4, 5, 7}));
  EXPECT_EQ(PieceParts(reads, 0, &first).size(), 20u);  // parts of 1 byte, and the empty read
  EXPECT_EQ(PieceParts({{4, 10}}, 64), (std::vector<DataSpan>{{4, 10}}));
  EXPECT_TRUE(PieceParts({}, 4, &first).empty());
  EXPECT_EQ(first, (std::vector<size_t>{0}));
}

}  // namespace
}  // namespace sluice

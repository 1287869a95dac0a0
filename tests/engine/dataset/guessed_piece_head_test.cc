// The guessed head of a cold Parquet folder's first file (GuessedPieceHead):
// which of a piece's spans it serves (exact), its spans and bytes read from
// a folder remote, its room, and its errors when the file is not as listed.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/guessed_piece_head.h"
#include "engine/dataset/remote_source.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

TEST(GuessedSpansServing, OnlyAPieceBeginningWithTheGuessedSpansIsServed) {
  const std::vector<DataSpan> head = {{4, 8}, {12, 8}};
  // The same spans; the piece's last ending within its guessed span.
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 8}}), 2u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 3}}), 2u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 5}}), 1u);
  // Longer than the guess: its first spans, then the rest read as ever.
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 8}, {20, 8}, {40, 2}}), 2u);
  // Elsewhere, or a span that is not the guessed one where it is not last.
  EXPECT_EQ(GuessedSpansServing(head, {{5, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 5}, {12, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {12, 9}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 9}}), 0u);
  EXPECT_EQ(GuessedSpansServing(head, {{4, 8}, {30, 8}}), 0u);
  EXPECT_EQ(GuessedSpansServing({}, {{4, 8}}), 0u);
}

class GuessedPieceHeadRead : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3000; ++i) bytes_ += static_cast<char>('a' + i % 23);
    ASSERT_TRUE(WriteFileAtomic(JoinPath(dir_.path(), "a.parquet"), bytes_).ok());
    auto remote = OpenRemoteSource(dir_.path());
    ASSERT_TRUE(remote.ok()) << remote.status().message();
    remote_ = std::move(*remote);
  }

  ScratchDir dir_;
  std::string bytes_;
  std::unique_ptr<RemoteSource> remote_;
};

// A file under a part: one span, from byte 4 to its end; a piece of its
// first 1,000 bytes from there gets them, exact, and nothing else is
// given: the room is the file's size, and it is taken once.
TEST_F(GuessedPieceHeadRead, ThePieceGetsTheFilesBytesFromFourInTheRoomOfTheFile) {
  GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", bytes_.size()));
  EXPECT_EQ(head.spans(), (std::vector<DataSpan>{{4, bytes_.size() - 4}}));
  EXPECT_EQ(head.Take(bytes_.size() + 1), nullptr);  // no piece of the file is larger
  char* room = head.Take(bytes_.size());
  ASSERT_NE(room, nullptr);
  EXPECT_EQ(head.Take(10), nullptr);  // once
  std::vector<Result<uint64_t>> got = head.Wait({1000});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok()) << got[0].status().message();
  EXPECT_EQ(*got[0], 1000u);
  ShardBytes piece = head.Release();
  ASSERT_EQ(piece.room(), bytes_.size());
  piece.Received(1000);
  EXPECT_EQ(piece.view(), bytes_.substr(4, 1000));
}

// A file of another size than listed: the span's answer is the read's
// error, naming the object and both sizes; a file gone: not found.
TEST_F(GuessedPieceHeadRead, AFileNotAsListedIsTheSpansError) {
  {
    GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", 5000));
    ASSERT_NE(head.Take(100), nullptr);
    std::vector<Result<uint64_t>> got = head.Wait({100});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_FALSE(got[0].ok());
    EXPECT_EQ(got[0].status().ToString(),
              "corrupt: " + JoinPath(dir_.path(), "a.parquet") +
                  ": the object is 3000 bytes, index.json says 5000 (the remote changed since it "
                  "was indexed?)");
  }
  {
    GuessedPieceHead head(*remote_, "b.parquet", "b.parquet", ObjectVersion("", 3000));
    ASSERT_NE(head.Take(100), nullptr);
    std::vector<Result<uint64_t>> got = head.Wait({100});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_FALSE(got[0].ok());
    EXPECT_EQ(got[0].status().ToString(), "not found: cannot open " +
                                              JoinPath(dir_.path(), "b.parquet") +
                                              ": No such file or directory");
  }
}

// Nothing to guess in a file of its magic alone.
TEST_F(GuessedPieceHeadRead, AFileOfItsMagicAloneIsNotGuessed) {
  GuessedPieceHead head(*remote_, "a.parquet", "a.parquet", ObjectVersion("", 4));
  EXPECT_TRUE(head.spans().empty());
  EXPECT_EQ(head.Take(0), nullptr);
}

}  // namespace
}  // namespace sluice

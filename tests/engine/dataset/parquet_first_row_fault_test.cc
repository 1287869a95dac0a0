// A cold Parquet pass's first row comes from the peek (StreamShards::
// PeekPieceRow): its row group's piece read into memory and decoded, before
// the piece is written into the cache. Shown on a disk that fails every
// write of a row group's piece (tests/base/fault_env.h): the first batch is
// still row 0, exact, and only the next one meets the cache's error; with
// the peek off the first batch is that error.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/base/fault_env.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FaultEnv;
using testing::FsOp;
using testing::ScratchDir;

const std::string kFirstRowFixture =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";

class ParquetFirstRowPeek : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy_file(kFirstRowFixture, fs::path(remote_.path()) / "a.parquet");
    // Row 0 as the file read in place gives it.
    auto local = StreamingDataset::Open(testing::OneStreamOptions("", remote_.path()));
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    SampleFields f;
    ASSERT_TRUE((*local)->Get(0, &f).ok());
    row0_ = testing::FieldBytes(f);
    // Every write of a row group's piece fails, as on a full disk.
    env_.Add({.op = FsOp::kWrite, .path_pattern = cache_.path() + "/.parquet_row_groups/*",
              .nth = 1, .times = 0, .err = ENOSPC});
  }

  DatasetOptions Options(bool peek) {
    DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache_.path());
    o.streams[0].parquet.emplace();
    o.streams[0].download_retry = 0;
    o.env = &env_;
    o.peek_first_sample = peek;
    o.prefetch_next_epoch = false;
    o.wait_timeout = std::chrono::seconds(5);
    return o;
  }

  // The error the cache reports for row group 0's piece.
  std::string PieceWriteError() const {
    const std::string piece =
        RowGroupPieceName("a.parquet", 0, {}, testing::TagOf(remote_.path(), "a.parquet"));
    return "shard cache '" + cache_.path() + "': fetching shard 0 '" + piece + "': ";
  }

  ScratchDir remote_, cache_;
  FaultEnv env_;
  std::string row0_;
};

TEST_F(ParquetFirstRowPeek, FirstRowComesBeforeItsRowGroupIsWrittenIntoTheCache) {
  auto ds = StreamingDataset::Open(Options(/*peek=*/true));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  auto first = (*ds)->NextBatch(8, ids.data(), &fields);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(*first, 1u);  // the peeked row alone
  EXPECT_EQ(ids[0], 0);
  EXPECT_TRUE(testing::FieldBytes(fields[0]) == row0_);
  // The piece never reached the cache: the next batch is the write's error.
  auto next = (*ds)->NextBatch(8, ids.data(), &fields);
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().ToString().find(PieceWriteError()), std::string::npos)
      << next.status().ToString();
  EXPECT_NE(next.status().ToString().find("No space left on device"), std::string::npos)
      << next.status().ToString();
  EXPECT_GE(env_.fired(), 1);
}

TEST_F(ParquetFirstRowPeek, WithoutThePeekTheFirstBatchIsTheWritesError) {
  auto ds = StreamingDataset::Open(Options(/*peek=*/false));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  auto first = (*ds)->NextBatch(8, ids.data(), &fields);
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().ToString().find(PieceWriteError()), std::string::npos)
      << first.status().ToString();
}

}  // namespace
}  // namespace sluice

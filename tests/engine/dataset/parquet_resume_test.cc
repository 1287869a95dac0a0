// A pass's first shard opens lazily when it is a Parquet row group
// (IterationCursor::ConsumerWaitsFor): a resumption at row R decodes,
// before its first row is handed out, what a lazy reader's first read at R
// decodes (R's page of each column; the pages before it skipped by their
// headers), not the whole group, and reads on exactly; under
// skip_corrupt_shards the group opens whole. In place and from a warm
// cache (the row group's piece), with and without the first-sample peek
// (the cursor's head open, or the prefetcher's scan).
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/iteration_cursor.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::ScratchDir;

const std::string kParquetDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

// `columns`: the Parquet columns read (empty: all).
DatasetOptions Options(const std::string& local, const std::string& remote, bool peek,
                       const std::vector<std::string>& columns) {
  DatasetOptions o;
  StreamOptions s;
  s.local = local;
  s.remote = remote;
  if (!columns.empty()) {
    s.parquet.emplace();
    s.parquet->columns = columns;
  }
  o.streams.push_back(s);
  o.prefetch_next_epoch = false;
  o.peek_first_sample = peek;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

// The data pages a reader of `file`'s group 0 has decoded once it has read
// row `row` alone: lazily (a resumption's first read) or opened whole.
size_t PagesForRow(const std::string& file, uint64_t rows, uint32_t row, bool lazy,
                   const std::vector<std::string>& columns = {}) {
  Result<std::string> bytes = ReadFile(file);
  EXPECT_TRUE(bytes.ok());
  if (!bytes.ok()) return 0;
  parquet::ColumnDecodeOptions options;
  options.lazy_rows = lazy;
  auto reader = parquet::ParquetShardReader::Open(*bytes, file, 0, rows, options, columns);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return 0;
  std::vector<std::string_view> fields;
  std::vector<parquet::MaskedField> masked;
  EXPECT_TRUE(reader->ReadRow(row, &fields, &masked).ok());
  return reader->data_pages_decoded();
}

// The rows of the folder's one group by id, through Get.
std::vector<std::string> AllRows(const std::string& dir, const std::vector<std::string>& columns) {
  auto ds = StreamingDataset::Open(Options(dir, "", false, columns));
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<std::string> rows;
  if (!ds.ok()) return rows;
  SampleFields f;
  for (uint64_t id = 0; id < (*ds)->num_samples(); ++id) {
    Status got = (*ds)->Get(id, &f);
    EXPECT_TRUE(got.ok()) << got.ToString();
    rows.push_back(FieldBytes(f));
  }
  return rows;
}

struct Case {
  const char* file;
  uint64_t rows;     // in its one row group
  uint32_t resume;   // the row a pass resumes at
  std::vector<std::string> columns;  // those read (empty: all)
  size_t fields;     // the top-level fields read
};

class ParquetResume : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    fs::copy_file(kParquetDir + "/" + GetParam().file, fs::path(table_.path()) / "p.parquet");
    rows_ = AllRows(table_.path(), GetParam().columns);
    ASSERT_EQ(rows_.size(), GetParam().rows);
    const std::string file = JoinPath(table_.path(), "p.parquet");
    lazy_pages_ = PagesForRow(file, GetParam().rows, GetParam().resume, true, GetParam().columns);
    whole_pages_ = PagesForRow(file, GetParam().rows, GetParam().resume, false, GetParam().columns);
    // The fixture's columns hold several pages each, some before the row.
    ASSERT_GT(whole_pages_, 2 * GetParam().fields);
    ASSERT_LT(lazy_pages_, whole_pages_);
  }

  // A pass of `options` resumed at the case's row: its first batch is one
  // row, checked with the pages its shard had decoded then (returned);
  // then every row after it, exactly.
  size_t Resume(const DatasetOptions& options) {
    auto ds = StreamingDataset::Open(options);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return 0;
    const int64_t at = GetParam().resume;
    EXPECT_TRUE((*ds)->IterBegin(0, at, 0, 1).ok());
    std::vector<int64_t> ids(8);
    std::vector<SampleFields> fields;
    auto n = (*ds)->NextBatch(1, ids.data(), &fields);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n != 1) return 0;
    EXPECT_EQ(ids[0], at);
    EXPECT_EQ(FieldBytes(fields[0]), rows_[static_cast<size_t>(at)]);
    std::shared_ptr<const OpenedShard> held = (*ds)->HeldShardForTesting(0);
    EXPECT_NE(held, nullptr);
    if (held == nullptr || held->view().parquet() == nullptr) return 0;
    const size_t pages = held->view().parquet()->data_pages_decoded();
    held.reset();
    std::vector<int64_t> got{ids[0]};
    std::vector<std::string> bytes{FieldBytes(fields[0])};
    while (true) {
      n = (*ds)->NextBatch(ids.size(), ids.data(), &fields);
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) break;
      for (size_t k = 0; k < *n; ++k) {
        got.push_back(ids[k]);
        bytes.push_back(FieldBytes(fields[k]));
      }
    }
    std::vector<int64_t> want;
    for (int64_t id = at; id < static_cast<int64_t>(rows_.size()); ++id) want.push_back(id);
    EXPECT_EQ(got, want);
    EXPECT_EQ(bytes, std::vector<std::string>(rows_.begin() + at, rows_.end()));
    return pages;
  }

  ScratchDir table_;
  std::vector<std::string> rows_;
  size_t lazy_pages_ = 0, whole_pages_ = 0;
};

TEST_P(ParquetResume, InPlaceTheFirstRowDecodesOnlyItsOwnPages) {
  for (bool peek : {false, true}) {
    SCOPED_TRACE(peek ? "peek" : "no peek");
    EXPECT_EQ(Resume(Options(table_.path(), "", peek, GetParam().columns)), lazy_pages_);
  }
}

// The row group's piece cached by a first pass, then resumed by a new
// dataset (the cache warm: nothing to peek).
TEST_P(ParquetResume, FromAWarmCacheTheFirstRowDecodesOnlyItsOwnPages) {
  for (bool peek : {false, true}) {
    SCOPED_TRACE(peek ? "peek" : "no peek");
    ScratchDir cache;
    const DatasetOptions options = Options(cache.path(), table_.path(), peek, GetParam().columns);
    {
      auto warm = StreamingDataset::Open(options);
      ASSERT_TRUE(warm.ok()) << warm.status().ToString();
      std::vector<std::string> bytes;
      testing::ReadEpoch(**warm, 0, 0, 0, 1, 64, &bytes);
      ASSERT_EQ(bytes, rows_);
    }
    EXPECT_EQ(Resume(options), lazy_pages_);
  }
}

// skip_corrupt_shards: a shard must fail at its open, before any of its
// rows is handed out, so the first shard opens whole as every other does.
TEST_P(ParquetResume, UnderSkipCorruptShardsTheGroupOpensWhole) {
  DatasetOptions options = Options(table_.path(), "", false, GetParam().columns);
  options.skip_corrupt_shards = true;
  EXPECT_EQ(Resume(options), whole_pages_);
}

// pa26_plain_pages_v1: flat columns of several 256-byte data pages (a
// resumption there decodes one page a column); pa26_lists_v2_small_pages:
// list columns, their pages found by their rows (its int_list, whose null
// elements a packed list<int32> cannot hold, not read).
INSTANTIATE_TEST_SUITE_P(
    Fixtures, ParquetResume,
    ::testing::Values(Case{"pa26_plain_pages_v1.parquet", 300, 217, {}, 10},
                      Case{"pa26_lists_v2_small_pages.parquet", 40, 29,
                           {"id", "string_list", "nested_int_list"}, 3}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.file).substr(0, std::string(info.param.file).find('.'));
    });

// One page a column for a flat column: the lazy count the cases compare
// against is R's page alone.
TEST(ParquetResumePages, AFlatGroupResumedDecodesOnePageAColumn) {
  const std::string file = kParquetDir + "/pa26_plain_pages_v1.parquet";
  EXPECT_EQ(PagesForRow(file, 300, 217, true), 10u);
}

// Until a pass's first row is read, the prefetcher opens no shard but the
// first position's (ShardPrefetcher's hold, for formats whose open
// decodes): the other groups' whole decodes would share the 2 cores with
// the first row's pages. Then it opens ahead again.
// pa26_many_row_groups: 9 groups (shards) of 7 rows (the last 4); the pass
// resumes at row 24, the 4th of group 3, with 4 open threads and a window
// over every row, so without the hold the prefetcher opens groups 4-8 as
// soon as group 3 is open.
TEST(ParquetResumeHold, NoOtherGroupOpensBeforeTheFirstRowThenThePrefetcherOpensAhead) {
  ScratchDir table;
  fs::copy_file(kParquetDir + "/pa26_many_row_groups.parquet", fs::path(table.path()) / "p.parquet");
  const std::vector<std::string> rows = AllRows(table.path(), {});
  ASSERT_EQ(rows.size(), 60u);
  constexpr int64_t kAt = 24;
  constexpr size_t kFirst = 3, kGroups = 9;
  for (bool peek : {false, true}) {
    SCOPED_TRACE(peek ? "peek" : "no peek");
    DatasetOptions options = Options(table.path(), "", peek, {});
    options.fetch_concurrency = 4;
    options.predownload = 64;
    auto ds = StreamingDataset::Open(options);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    StreamingDataset& d = **ds;
    // The other groups open once the first row is read, not before. The
    // hook runs on the consumer's thread then, before the prefetcher hears
    // of it: it gives the prefetcher's threads 300 ms to open what they
    // would (without the hold they start at once). With the hold its
    // result does not depend on that time: only the read lets them go.
    std::vector<size_t> opened_before;
    bool hooked = false;
    IterationCursor::SetFirstRowHookForTesting([&](bool ended) {
      if (ended) return;
      hooked = true;
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
      while (opened_before.empty() && std::chrono::steady_clock::now() < until) {
        for (size_t g = 0; g < kGroups; ++g) {
          if (g != kFirst && d.HeldShardForTesting(g) != nullptr) opened_before.push_back(g);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    ASSERT_TRUE(d.IterBegin(0, kAt, 0, 1).ok());
    std::vector<int64_t> ids(8);
    std::vector<SampleFields> fields;
    auto n = d.NextBatch(1, ids.data(), &fields);
    IterationCursor::SetFirstRowHookForTesting(nullptr);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_EQ(*n, 1u);
    EXPECT_TRUE(hooked);
    EXPECT_EQ(ids[0], kAt);
    EXPECT_EQ(FieldBytes(fields[0]), rows[kAt]);
    EXPECT_EQ(opened_before, std::vector<size_t>{});
    EXPECT_NE(d.HeldShardForTesting(kFirst), nullptr);
    // Read: the prefetcher opens the next group while the consumer
    // has not asked past its first row (a bound for a hang, not a timing).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (d.HeldShardForTesting(kFirst + 1) == nullptr && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_NE(d.HeldShardForTesting(kFirst + 1), nullptr);
    // And the rest of the pass, exactly.
    std::vector<int64_t> got{ids[0]};
    std::vector<std::string> bytes{FieldBytes(fields[0])};
    while (true) {
      n = d.NextBatch(ids.size(), ids.data(), &fields);
      ASSERT_TRUE(n.ok()) << n.status().ToString();
      if (*n == 0) break;
      for (size_t k = 0; k < *n; ++k) {
        got.push_back(ids[k]);
        bytes.push_back(FieldBytes(fields[k]));
      }
    }
    std::vector<int64_t> want;
    for (int64_t id = kAt; id < static_cast<int64_t>(rows.size()); ++id) want.push_back(id);
    EXPECT_EQ(got, want);
    EXPECT_EQ(bytes, std::vector<std::string>(rows.begin() + kAt, rows.end()));
  }
}

// The hold ends once the first row is read, not when the call that reads
// it returns: a pass's first batch goes on into the next group once the
// prefetcher has opened it. Resumed at row 27, the last of group 3 (rows
// 21-27), a NextBatch(2) returns rows 27 and 28 (group 4's first) when
// group 4 opened before the batch passed row 27: the hook, run once row
// 27 is read and after the prefetcher heard the hold end, waits for
// that. (Its wait is bounded, for a hang; a hold ended only at the
// call's end never lets group 4 open within the call, and every attempt
// returns row 27 alone.) Attempts again only for the moment between the
// group's open and the prefetcher's taking it in, which the hook cannot
// see.
TEST(ParquetResumeHold, TheFirstBatchGoesOnIntoTheNextGroupOnceTheFirstRowIsRead) {
  ScratchDir table;
  fs::copy_file(kParquetDir + "/pa26_many_row_groups.parquet", fs::path(table.path()) / "p.parquet");
  const std::vector<std::string> rows = AllRows(table.path(), {});
  ASSERT_EQ(rows.size(), 60u);
  constexpr int64_t kAt = 27;
  constexpr size_t kNext = 4;
  DatasetOptions options = Options(table.path(), "", /*peek=*/false, {});
  options.predownload = 64;  // a window over every row
  auto ds = StreamingDataset::Open(options);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  StreamingDataset& d = **ds;
  bool next_open = false;
  IterationCursor::SetFirstRowHookForTesting([&](bool ended) {
    if (!ended) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (d.HeldShardForTesting(kNext) == nullptr && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    next_open = d.HeldShardForTesting(kNext) != nullptr;
  });
  std::vector<int64_t> ids(2);
  std::vector<SampleFields> fields;
  Result<size_t> n = size_t{0};
  for (int attempt = 0; attempt < 20 && n.ok() && *n != 2; ++attempt) {
    next_open = false;
    ASSERT_TRUE(d.IterBegin(0, kAt, 0, 1).ok());
    n = d.NextBatch(2, ids.data(), &fields);
    if (!next_open) break;  // the hook's wait ran out: no attempt would do
  }
  IterationCursor::SetFirstRowHookForTesting(nullptr);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_TRUE(next_open);
  ASSERT_EQ(*n, 2u);
  EXPECT_EQ(ids[0], kAt);
  EXPECT_EQ(ids[1], kAt + 1);
  EXPECT_EQ(FieldBytes(fields[0]), rows[kAt]);
  EXPECT_EQ(FieldBytes(fields[1]), rows[kAt + 1]);
}

// MDS opens map their shards, decode nothing: its passes never hold
// (ShardFormatDescriptor::open_decodes), so a cold epoch's other downloads
// are not delayed behind the first shard. The hook, once the first sample
// is read and before a hold would end, waits for shard 1 to open: under a
// hold it could not (the wait is a bound for that failure, not a
// timing).
TEST(ParquetResumeHold, AnMdsPassNeverHolds) {
  ScratchDir dir;
  testing::WriteSyntheticMds(dir.path(), 200, 4096);
  DatasetOptions options;
  StreamOptions s;
  s.local = dir.path();
  options.streams.push_back(s);
  options.prefetch_next_epoch = false;
  options.fetch_concurrency = 4;
  options.predownload = 200;
  options.wait_timeout = std::chrono::seconds(20);
  auto ds = StreamingDataset::Open(options);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  StreamingDataset& d = **ds;
  bool opened_before = false;
  IterationCursor::SetFirstRowHookForTesting([&](bool ended) {
    if (ended) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (d.HeldShardForTesting(1) == nullptr && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    opened_before = d.HeldShardForTesting(1) != nullptr;
  });
  ASSERT_TRUE(d.IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(1);
  std::vector<SampleFields> fields;
  auto n = d.NextBatch(1, ids.data(), &fields);
  IterationCursor::SetFirstRowHookForTesting(nullptr);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 1u);
  EXPECT_EQ(ids[0], 0);
  EXPECT_TRUE(opened_before);
}

}  // namespace
}  // namespace sluice

// A Parquet folder on a local disk streamed through a plain-path remote
// (engine/dataset/parquet_footer_source.h): the node's first open writes
// no footer store, its binary index keyed by the listing alone is mapped by
// a later open that reads no file, and a row group's fetch reads its
// file's footer again, of the listed version: a footer damaged since the
// open (the file's size and tag kept) is named at the fetch.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/streaming_dataset.h"
#include "stores/file/file_store.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FieldBytes;
using testing::ScratchDir;

const std::string kFooterSourceFixture =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
// 2 files x 9 row groups (7 rows each, the last 4): 120 rows.
constexpr uint64_t kFooterSourceRows = 120;

// a.parquet and b.parquet, each a copy of the fixture.
void WriteTwoFixtureCopies(const std::string& dir) {
  fs::copy_file(kFooterSourceFixture, fs::path(dir) / "a.parquet");
  fs::copy_file(kFooterSourceFixture, fs::path(dir) / "b.parquet");
}

DatasetOptions FooterSourceOptions(const std::string& local, const std::string& remote = "") {
  DatasetOptions o;
  StreamOptions s;
  s.local = local;
  s.remote = remote;
  s.download_retry = 0;
  o.streams.push_back(s);
  o.prefetch_next_epoch = false;
  o.peek_first_sample = false;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

// Every row of `ds` by id, as FieldBytes.
std::vector<std::string> RowsById(StreamingDataset& ds) {
  std::vector<std::string> rows;
  SampleFields f;
  for (uint64_t id = 0; id < ds.num_samples(); ++id) {
    Status got = ds.Get(id, &f);
    EXPECT_TRUE(got.ok()) << id << ": " << got.message();
    rows.push_back(FieldBytes(f));
  }
  return rows;
}

// The footer length a Parquet file's bytes end with (before "PAR1").
uint32_t FooterLengthOf(const std::string& bytes) {
  uint32_t length = 0;
  for (size_t i = 0; i < 4; ++i) {
    length |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[bytes.size() - 8 + i])) << (8 * i);
  }
  return length;
}

// Writes `bytes` over `path` at `at` in place, then puts its mtime back:
// its size and LocalFileTag (inode, mtime) stay the listed ones.
void OverwriteKeepingTag(const std::string& path, uint64_t at, const std::string& bytes) {
  auto before = Env::Default()->Stat(path);
  ASSERT_TRUE(before.ok());
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)),
            static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::close(fd), 0);
  const struct timespec times[2] = {before->st_atim, before->st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  auto after = Env::Default()->Stat(path);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(LocalFileTag(*after), LocalFileTag(*before));
  ASSERT_EQ(after->st_size, before->st_size);
}

TEST(ParquetFooterSource, ALocalFoldersFirstOpenWritesNoStoreAndALaterOneReadsNoFile) {
  ScratchDir data, cache;
  WriteTwoFixtureCopies(data.path());
  auto remote = OpenRemoteSource(data.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  ASSERT_TRUE((*remote)->OnLocalDisk());
  EXPECT_FALSE(KeepsParquetFooterStore(**remote));

  std::vector<std::string> want;
  {
    auto in_place = StreamingDataset::Open(FooterSourceOptions(data.path()));
    ASSERT_TRUE(in_place.ok()) << in_place.status().message();
    want = RowsById(**in_place);
  }
  ASSERT_EQ(want.size(), kFooterSourceRows);
  {
    auto first = StreamingDataset::Open(FooterSourceOptions(cache.path(), data.path()));
    ASSERT_TRUE(first.ok()) << first.status().message();
    EXPECT_EQ(RowsById(**first), want);
  }
  const std::string state = JoinPath(cache.path(), ".sluice");
  EXPECT_FALSE(FileExists(ParquetFooterStorePath(state)));
  EXPECT_FALSE(FileExists(JoinPath(state, "parquet_footers.lock")));
  ASSERT_TRUE(FileExists(JoinPath(state, "parquet_index.bin")));

  // Every file emptied: an open that read a footer, or listed the folder
  // again, would fail. The later open maps the node's binary index; the
  // rows already cached are served, and a group not cached names the
  // file's new size at its footer's read.
  const std::string a = JoinPath(data.path(), "a.parquet");
  auto listed = Env::Default()->Stat(a);
  ASSERT_TRUE(listed.ok());
  for (const char* name : {"a.parquet", "b.parquet"}) {
    fs::resize_file(fs::path(data.path()) / name, 0);
  }
  auto now = Env::Default()->Stat(a);
  ASSERT_TRUE(now.ok());
  auto later = StreamingDataset::Open(FooterSourceOptions(cache.path(), data.path()));
  ASSERT_TRUE(later.ok()) << later.status().message();
  EXPECT_EQ((*later)->num_samples(), kFooterSourceRows);
  EXPECT_EQ((*later)->num_shards(), 18u);
  EXPECT_EQ(RowsById(**later), want);
  ASSERT_TRUE(fs::remove_all(fs::path(cache.path()) / ".parquet_row_groups") > 0);
  auto uncached = StreamingDataset::Open(FooterSourceOptions(cache.path(), data.path()));
  ASSERT_TRUE(uncached.ok()) << uncached.status().message();
  SampleFields f;
  const Status got = (*uncached)->Get(0, &f);
  auto fixture = ReadFile(kFooterSourceFixture);
  ASSERT_TRUE(fixture.ok());
  const std::string size = std::to_string(fixture->size());
  const std::string first = std::to_string(fixture->size() - FooterLengthOf(*fixture) - 8);
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), "shard cache '" + cache.path() + "': fetching shard 0 '" +
                               RowGroupPieceName("a.parquet", 0, {}, LocalFileTag(*listed)) +
                               "': a.parquet: row group 0, bytes [" + first + ", " + size + ") of " +
                               a + ": " + a + ": changed since it was listed (ETag " +
                               LocalFileTag(*now) + ", listed " + LocalFileTag(*listed) +
                               "); bytes " + first + ".." + size + " not read");
}

// The footer as its fetch reads it again: its magic damaged, then its
// length, each after the open and with the file's size and tag kept.
TEST(ParquetFooterSource, AFooterDamagedSinceTheOpenIsNamedAtTheFetch) {
  ScratchDir data, cache;
  WriteTwoFixtureCopies(data.path());
  const std::string b = JoinPath(data.path(), "b.parquet");
  const uint64_t size = fs::file_size(b);
  auto bytes = ReadFile(b);
  ASSERT_TRUE(bytes.ok());
  const uint32_t length = FooterLengthOf(*bytes);
  auto ds = StreamingDataset::Open(FooterSourceOptions(cache.path(), data.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  auto tag = Env::Default()->Stat(b);
  ASSERT_TRUE(tag.ok());
  const std::string shard = "shard cache '" + cache.path() + "': fetching shard ";
  SampleFields f;

  ASSERT_NO_FATAL_FAILURE(OverwriteKeepingTag(b, size - 4, "PAR2"));
  Status got = (*ds)->Get(119, &f);  // row group 8 of b.parquet
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), shard + "17 '" + RowGroupPieceName("b.parquet", 8, {}, LocalFileTag(*tag)) +
                               "': b.parquet: not a Parquet file: it ends in \"50415232\" (hex), not \"PAR1\"")
      << got.message();

  ASSERT_NO_FATAL_FAILURE(OverwriteKeepingTag(b, size - 4, "PAR1"));
  const uint32_t longer = length + 1;
  ASSERT_NO_FATAL_FAILURE(OverwriteKeepingTag(
      b, size - 8, std::string{static_cast<char>(longer & 0xff), static_cast<char>(longer >> 8 & 0xff),
                               static_cast<char>(longer >> 16 & 0xff), static_cast<char>(longer >> 24)}));
  got = (*ds)->Get(118, &f);  // row group 8 of b.parquet, again (not cached)
  EXPECT_EQ(got.code(), StatusCode::kCorrupt) << got.message();
  EXPECT_EQ(got.message(), shard + "17 '" + RowGroupPieceName("b.parquet", 8, {}, LocalFileTag(*tag)) +
                               "': b.parquet: row group 8: a footer of " + std::to_string(longer) +
                               " bytes in a tail of " + std::to_string(length + 8))
      << got.message();

  // Put back, the same group is read whole.
  ASSERT_NO_FATAL_FAILURE(OverwriteKeepingTag(b, size - 8, bytes->substr(size - 8, 4)));
  EXPECT_TRUE((*ds)->Get(119, &f).ok());
}

}  // namespace
}  // namespace sluice

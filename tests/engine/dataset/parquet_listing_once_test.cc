// A local Parquet folder's first open on a node (issue 38): the listing
// takes names alone and each file's size and version come from the open
// its footer read makes (LoadStreamListing's completer), so each name is
// looked up once; the listing.json it keeps is the one a stat of each name
// keeps, and a file replaced between the listing and its read is kept as
// it was read.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/file_listing_index.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/remote_source.h"
#include "stores/file/file_store.h"
#include "tests/base/forwarding_env.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

const std::string kOnceFixture =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";
const std::string kOnceOther =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_types_plain_uncompressed.parquet";

// Env::Default() counting the stats of names beneath `root`; the first
// open of `replace_at` (a whole path) renames `replace_with` onto it
// first, as a writer publishing a new version would.
class OnceCountingEnv final : public testing::ForwardingEnv {
 public:
  explicit OnceCountingEnv(std::string root) : root_(std::move(root) + "/") {}
  int stats() const { return stats_; }
  void ReplaceOnFirstOpen(std::string at, std::string with) {
    replace_at_ = std::move(at);
    replace_with_ = std::move(with);
  }

  Result<OwnedFd> Open(const FsPath& file, OpenMode mode, const OpenOptions& options) override {
    if (!replace_at_.empty() && file.path == replace_at_ && !replaced_.exchange(true)) {
      if (::rename(replace_with_.c_str(), replace_at_.c_str()) != 0) ::abort();
    }
    return ForwardingEnv::Open(file, mode, options);
  }
  Result<struct stat> Stat(const FsPath& file, bool follow_links) override {
    if (file.path.starts_with(root_)) ++stats_;
    return ForwardingEnv::Stat(file, follow_links);
  }
  // Forwarded, types and all: ForwardingEnv leaves it to Env's default,
  // which lists through ListFolder with no types (a stat each name).
  Result<std::vector<FolderEntry>> ListFolderTyped(const FsPath& folder) override {
    return base()->ListFolderTyped(folder);
  }

 private:
  std::string root_;
  std::atomic<int> stats_{0};
  std::string replace_at_, replace_with_;
  std::atomic<bool> replaced_{false};
};

// Parquet files at the root and two folders down, a file of another kind,
// what Spark leaves beside data, a link to a Parquet file and a fifo named
// like one (neither regular file is read, nor is the fifo listed).
void WriteMixedParquetFolder(const std::string& dir) {
  fs::create_directories(fs::path(dir) / "part=b" / "deeper");
  fs::copy_file(kOnceFixture, fs::path(dir) / "a.parquet");
  fs::copy_file(kOnceFixture, fs::path(dir) / "part=b" / "c.parquet");
  fs::copy_file(kOnceOther, fs::path(dir) / "part=b" / "deeper" / "d.parquet");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "notes.txt"), "not a Parquet file").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "_SUCCESS"), "").ok());
  fs::create_symlink("a.parquet", fs::path(dir) / "link.parquet");
  ASSERT_EQ(::mkfifo(JoinPath(dir, "pipe.parquet").c_str(), 0600), 0);
}

StreamOptions OnceStream(const std::string& local, const std::string& remote) {
  StreamOptions s;
  s.local = local;
  s.remote = remote;
  return s;
}

std::string ListingOf(const std::string& cache) {
  auto text = ReadFile(JoinPath(cache, ".sluice/listing.json"));
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

// The listing.json a stat of each name keeps (LoadStreamListing without a
// completer) of `folder`, made in `cache`.
std::string StatListing(const std::string& folder, const std::string& cache) {
  auto remote = OpenRemoteSource(folder, StoreOptions{});
  EXPECT_TRUE(remote.ok()) << remote.status().message();
  if (!remote.ok()) return "";
  auto files = LoadStreamListing(OnceStream(cache, folder), FileDatasetOptions{}, remote->get(),
                                 std::chrono::seconds(20));
  EXPECT_TRUE(files.ok()) << files.status().message();
  return ListingOf(cache);
}

TEST(ParquetListingOnce, AFolderListedByNameKeepsTheListingAStatOfEachNameKeeps) {
  ScratchDir folder, cache, stat_cache;
  WriteMixedParquetFolder(folder.path());
  OnceCountingEnv env(folder.path());
  StoreOptions store;
  store.env = &env;
  auto remote = OpenRemoteSource(folder.path(), store);
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  ASSERT_TRUE((*remote)->OnLocalDisk());  // a scratch folder's file system
  auto table = LoadParquetStreamTable(OnceStream(cache.path(), folder.path()), FileDatasetOptions{},
                                      remote->get(), std::chrono::seconds(20));
  ASSERT_TRUE(table.ok()) << table.status().message();
  // Stat'ed: the link and the two folders, no regular file (each is
  // opened once, by its read).
  EXPECT_EQ(env.stats(), 3);
  const std::string listing = ListingOf(cache.path());
  EXPECT_EQ(listing, StatListing(folder.path(), stat_cache.path()));
  // Every file but the fifo, each with its size and version.
  struct stat a, c, d, notes, success;
  ASSERT_EQ(::stat(JoinPath(folder.path(), "_SUCCESS").c_str(), &success), 0);
  ASSERT_EQ(::stat(JoinPath(folder.path(), "a.parquet").c_str(), &a), 0);
  ASSERT_EQ(::stat(JoinPath(folder.path(), "part=b/c.parquet").c_str(), &c), 0);
  ASSERT_EQ(::stat(JoinPath(folder.path(), "part=b/deeper/d.parquet").c_str(), &d), 0);
  ASSERT_EQ(::stat(JoinPath(folder.path(), "notes.txt").c_str(), &notes), 0);
  const std::string files =
      "[\n[\"_SUCCESS\", 0, \"" + LocalFileTag(success) + "\"],\n"
      "[\"a.parquet\", " + std::to_string(a.st_size) + ", \"" + LocalFileTag(a) + "\"],\n"
      "[\"link.parquet\", " + std::to_string(a.st_size) + ", \"" + LocalFileTag(a) + "\"],\n"
      "[\"notes.txt\", " + std::to_string(notes.st_size) + ", \"" + LocalFileTag(notes) + "\"],\n"
      "[\"part=b/c.parquet\", " + std::to_string(c.st_size) + ", \"" + LocalFileTag(c) + "\"],\n"
      "[\"part=b/deeper/d.parquet\", " + std::to_string(d.st_size) + ", \"" + LocalFileTag(d) +
      "\"]]";
  EXPECT_NE(listing.find("\"files\": " + files), std::string::npos) << listing;
  // The table: the same as a table made from the stat'ed listing.
  auto again = LoadParquetStreamTable(OnceStream(stat_cache.path(), folder.path()),
                                      FileDatasetOptions{}, remote->get(), std::chrono::seconds(20));
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_EQ(table->size(), again->size());
  for (size_t i = 0; i < table->size(); ++i) {
    EXPECT_EQ(table->samples(i), again->samples(i)) << i;
  }
}

TEST(ParquetListingOnce, AFileReplacedBetweenTheListingAndItsReadIsKeptAsRead) {
  ScratchDir folder, cache, spare;
  fs::copy_file(kOnceFixture, fs::path(folder.path()) / "a.parquet");
  fs::copy_file(kOnceFixture, fs::path(folder.path()) / "b.parquet");
  const std::string replacement = JoinPath(folder.path(), ".a.parquet.new");
  fs::copy_file(kOnceOther, replacement);
  OnceCountingEnv env(folder.path());
  env.ReplaceOnFirstOpen(JoinPath(folder.path(), "a.parquet"), replacement);
  StoreOptions store;
  store.env = &env;
  auto remote = OpenRemoteSource(folder.path(), store);
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  ASSERT_TRUE((*remote)->OnLocalDisk());
  auto table = LoadParquetStreamTable(OnceStream(cache.path(), folder.path()), FileDatasetOptions{},
                                      remote->get(), std::chrono::seconds(20));
  ASSERT_TRUE(table.ok()) << table.status().message();
  struct stat now;
  ASSERT_EQ(::stat(JoinPath(folder.path(), "a.parquet").c_str(), &now), 0);
  auto other = ReadFile(kOnceOther);
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(static_cast<uint64_t>(now.st_size), other->size());
  const std::string listing = ListingOf(cache.path());
  EXPECT_NE(listing.find("[\"a.parquet\", " + std::to_string(other->size()) + ", \"" +
                         LocalFileTag(now) + "\"]"),
            std::string::npos)
      << listing;
}

}  // namespace
}  // namespace sluice

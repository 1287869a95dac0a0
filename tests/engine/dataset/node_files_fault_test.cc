// What a failing disk does to the files a dataset makes once per node
// before it reads a sample: a raw-file stream's listing
// (<local>/.sluice/listing.json) and a Parquet stream's footer store
// (<local>/.sluice/parquet_footers). The dataset's Env (DatasetOptions::env)
// is a FaultEnv that fails the file's write (a full disk) or its rename into
// place; the remote is a folder (the stores' file store, through the same
// Env: the HTTP test server answers no listing and no ranged read), named by
// a file:// URL for a Parquet stream (a plain path on a local disk keeps no
// footer store: KeepsParquetFooterStore). Opening
// the dataset fails with the error naming the stream and the file, nothing
// is left under the file's name and no temporary beside it, and the next
// open, the fault gone, makes the file and reads every sample.
#include <gtest/gtest.h>

#include <algorithm>
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

const std::string kParquetFixture =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_many_row_groups.parquet";

// Every sample of epoch 0 in order, as FieldBytes; the first error.
Status ReadEveryNodeFileSample(StreamingDataset& ds, std::vector<std::string>* bytes) {
  SLUICE_RETURN_IF_ERROR(ds.IterBegin(0, 0, 0, 1));
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds.NextBatch(8, ids.data(), &fields));
    if (n == 0) return Status::Ok();
    for (size_t i = 0; i < n; ++i) bytes->push_back(testing::FieldBytes(fields[i]));
  }
}

// The kind of stream, and so the node file it makes.
enum class NodeFileKind { kListing, kFooterStore };

class NodeFilesFaultTest : public ::testing::TestWithParam<NodeFileKind> {
 protected:
  void SetUp() override {
    if (GetParam() == NodeFileKind::kListing) {
      for (int i = 0; i < 12; ++i) {
        const std::string dir = JoinPath(remote_.path(), "part" + std::to_string(i % 3));
        ASSERT_TRUE(MakeDirs(dir).ok());
        const std::string bytes = "file " + std::to_string(i) + std::string(i * 50, 'x');
        ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "f" + std::to_string(i)), bytes).ok());
      }
    } else {
      fs::create_directories(fs::path(remote_.path()) / "b");
      fs::copy_file(kParquetFixture, fs::path(remote_.path()) / "a.parquet");
      fs::copy_file(kParquetFixture, fs::path(remote_.path()) / "b" / "c.parquet");
    }
    // What the stream holds, read by a dataset over the real file system.
    ScratchDir other;
    DatasetOptions o = Options(other.path());
    o.env = Env::Default();
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_TRUE(ReadEveryNodeFileSample(**ds, &want_).ok());
    ASSERT_GE(want_.size(), 12u);
  }

  DatasetOptions Options(const std::string& local) {
    DatasetOptions o = testing::OneStreamOptions(
        GetParam() == NodeFileKind::kListing ? remote_.path() : "file://" + remote_.path(), local);
    if (GetParam() == NodeFileKind::kListing) {
      o.streams[0].files.emplace();
    } else {
      o.streams[0].parquet.emplace();
    }
    o.env = &env_;
    o.peek_first_sample = false;
    o.wait_timeout = std::chrono::seconds(5);
    return o;
  }

  std::string StateDir() const { return JoinPath(local_.path(), ".sluice"); }
  std::string NodeFile() const {
    return JoinPath(StateDir(), GetParam() == NodeFileKind::kListing ? "listing.json"
                                                                     : "parquet_footers");
  }
  std::string Temporaries() const {
    return StateDir() + "/." + fs::path(NodeFile()).filename().string() + ".sluice-tmp.*";
  }
  // The start of the error of a dataset whose node file failed.
  std::string ErrorAbout() const { return "i/o error: stream 0 (" + local_.path() + "): "; }

  // Nothing under the node file's name, no temporary beside it.
  void ExpectNothingLeft() const {
    EXPECT_FALSE(FileExists(NodeFile())) << NodeFile();
    for (const auto& e : fs::directory_iterator(StateDir())) {
      const std::string name = e.path().filename().string();
      EXPECT_EQ(name.find(".sluice-tmp."), std::string::npos) << name << " left behind";
    }
  }

  // The fault gone, the next open makes the node file and reads every
  // sample.
  void ExpectNextOpenReadsEverything() {
    env_.Clear();
    auto ds = StreamingDataset::Open(Options(local_.path()));
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    std::vector<std::string> got;
    Status st = ReadEveryNodeFileSample(**ds, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(got, want_);
    EXPECT_TRUE(FileExists(NodeFile())) << NodeFile();
  }

  ScratchDir remote_, local_;
  std::vector<std::string> want_;
  FaultEnv env_;
};

TEST_P(NodeFilesFaultTest, AFullDiskWritingTheNodeFileFailsTheOpenNamingItAndTheNextOpenMakesIt) {
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(), .nth = 1, .err = ENOSPC});
  auto ds = StreamingDataset::Open(Options(local_.path()));
  ASSERT_EQ(env_.fired(), 1);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(tmp.rfind(StateDir() + "/." + fs::path(NodeFile()).filename().string() +
                          ".sluice-tmp.",
                      0),
            0u)
      << tmp;
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().ToString(),
            ErrorAbout() + "cannot write " + tmp + ": No space left on device");
  EXPECT_EQ(ds.status().os_error(), ENOSPC);
  ExpectNothingLeft();
  ExpectNextOpenReadsEverything();
}

TEST_P(NodeFilesFaultTest, AFailedRenameOfTheNodeFileFailsTheOpenNamingItAndTheNextOpenMakesIt) {
  env_.Add({.op = FsOp::kRename, .path_pattern = NodeFile(), .nth = 1, .err = EIO});
  auto ds = StreamingDataset::Open(Options(local_.path()));
  ASSERT_EQ(env_.fired(), 1);
  const std::string tmp = env_.last_fired_path();  // the rename's source
  EXPECT_EQ(tmp.rfind(StateDir() + "/." + fs::path(NodeFile()).filename().string() +
                          ".sluice-tmp.",
                      0),
            0u)
      << tmp;
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().ToString(),
            ErrorAbout() + "cannot rename " + tmp + " onto " + NodeFile() + ": Input/output error");
  ExpectNothingLeft();
  ExpectNextOpenReadsEverything();
}

// A node file that cannot be read where it is read (an I/O error) fails
// the open naming it, and is kept: the next open reads it. The listing is
// read by an open that finds it made (another process of the node, here an
// earlier open): its maker hands on the listing it made without reading it
// back. The footer store is mapped, not read, by its maker too.
TEST_P(NodeFilesFaultTest, AnIoErrorReadingTheNodeFileFailsTheOpenNamingItAndTheNextOpenReadsIt) {
  const bool mapped = GetParam() == NodeFileKind::kFooterStore;
  if (!mapped) {
    auto maker = StreamingDataset::Open(Options(local_.path()));
    ASSERT_TRUE(maker.ok()) << maker.status().ToString();
    ASSERT_TRUE(FileExists(NodeFile())) << NodeFile();
    ASSERT_EQ(env_.fired(), 0);
  }
  env_.Add({.op = mapped ? FsOp::kMap : FsOp::kRead, .path_pattern = NodeFile(), .nth = 1,
            .err = EIO});
  auto ds = StreamingDataset::Open(Options(local_.path()));
  ASSERT_EQ(env_.fired(), 1);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().ToString(), ErrorAbout() + (mapped ? "cannot map " : "cannot read ") +
                                        NodeFile() + ": Input/output error");
  EXPECT_TRUE(FileExists(NodeFile()));
  ExpectNextOpenReadsEverything();
}

// The shard fetches map the footer store again (each row group's piece
// ends with its file's footer tail) through the same Env: an I/O error
// there is the consumer's error naming the store; the store is kept, and
// the next open reads every sample.
TEST(NodeFilesFooterStoreReadTest, AnIoErrorReadingTheStoreForAFetchIsTheConsumersErrorNamingIt) {
  ScratchDir remote, local, other;
  fs::copy_file(kParquetFixture, fs::path(remote.path()) / "a.parquet");
  FaultEnv env;
  auto options = [&](const std::string& cache, Env* e) {
    DatasetOptions o = testing::OneStreamOptions("file://" + remote.path(), cache);
    o.streams[0].parquet.emplace();
    o.env = e;
    o.peek_first_sample = false;
    o.fetch_concurrency = 1;
    o.wait_timeout = std::chrono::seconds(5);
    return o;
  };
  std::vector<std::string> want;
  {
    auto ds = StreamingDataset::Open(options(other.path(), Env::Default()));
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_TRUE(ReadEveryNodeFileSample(**ds, &want).ok());
  }
  const std::string store = JoinPath(local.path(), ".sluice/parquet_footers");
  {
    auto ds = StreamingDataset::Open(options(local.path(), &env));
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    env.Add({.op = FsOp::kMap, .path_pattern = store, .nth = 1, .err = EIO});
    std::vector<std::string> got;
    Status st = ReadEveryNodeFileSample(**ds, &got);
    ASSERT_EQ(env.fired(), 1);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(st.ToString(), "i/o error: prefetching sample position 0: shard cache '" +
                                 local.path() +
                                 "': fetching shard 0 '" +
                                 RowGroupPieceName("a.parquet", 0, {}, testing::TagOf(remote.path(), "a.parquet")) +
                                 "': cannot map " + store + ": Input/output error");
    EXPECT_TRUE(FileExists(store));
  }
  env.Clear();
  auto ds = StreamingDataset::Open(options(local.path(), &env));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<std::string> got;
  Status st = ReadEveryNodeFileSample(**ds, &got);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(NodeFiles, NodeFilesFaultTest,
                         ::testing::Values(NodeFileKind::kListing, NodeFileKind::kFooterStore),
                         [](const ::testing::TestParamInfo<NodeFileKind>& info) {
                           return info.param == NodeFileKind::kListing ? std::string("Listing")
                                                                       : std::string("FooterStore");
                         });

}  // namespace
}  // namespace sluice

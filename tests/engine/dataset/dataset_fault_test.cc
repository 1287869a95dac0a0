// What a failing disk does to a whole StreamingDataset: its file system is a
// FaultEnv (DatasetOptions::env) that fails one chosen call of a shard's
// download into the cache (a full disk, an I/O error) or of its commit (the
// rename onto the shard's name). The remote is an HTTP server on 127.0.0.1,
// so the download is the HTTP client's (GetToFile through the Env). Each
// fault gives the consumer an error naming the shard and the file, leaves
// nothing under the shard's name and no temporary, keeps the cache's
// accounting equal to the shard files on disk, and the same dataset reads
// the whole epoch once the fault is gone.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/base/fault_env.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/stalling_file_server.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FaultEnv;
using testing::FsOp;
using testing::ScratchDir;
using testing::StallingFileServer;

// Reads epoch 0 in order in batches of 8: each sample's bytes, and the
// first error.
Status ReadInOrder(StreamingDataset& ds, std::vector<std::string>* bytes) {
  SLUICE_RETURN_IF_ERROR(ds.IterBegin(0, 0, 0, 1));
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds.NextBatch(8, ids.data(), &fields));
    if (n == 0) return Status::Ok();
    for (size_t i = 0; i < n; ++i) bytes->push_back(testing::FieldBytes(fields[i]));
  }
}

// The names in `dir` (not below), sorted.
std::vector<std::string> NamesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class DatasetFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteSyntheticMds(remote_.path(), 300, 8 << 10);
    auto reader = DatasetReader::Open(remote_.path());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    uint64_t first = 0;
    for (const ShardEntry& e : (*reader)->index().shards) {
      shards_.push_back(e.raw_data.basename);
      bytes_.push_back(e.raw_data.bytes);
      first_sample_.push_back(first);
      first += e.samples;
    }
    ASSERT_GE(shards_.size(), 4u);
    SampleFields f;
    for (uint64_t i = 0; i < (*reader)->num_samples(); ++i) {
      ASSERT_TRUE((*reader)->Read(i, &f).ok());
      want_.push_back(testing::FieldBytes(f));
    }
    server_.emplace(remote_.path(), "no file stalls");
  }

  // The dataset over the server, cached in local_, its files through env_.
  // One shard in flight at a time, no peek of first samples: each shard is
  // one download; the store retries a failed download itself, and a disk
  // error is not one it retries.
  std::unique_ptr<StreamingDataset> Open() {
    DatasetOptions o = testing::OneStreamOptions(server_->url(), local_.path());
    o.env = &env_;
    o.fetch_concurrency = 1;
    o.peek_first_sample = false;
    o.cache_limit = 6 * (12 << 10);  // a few shards: a reservation not given back would starve it
    o.wait_timeout = std::chrono::seconds(5);
    auto ds = StreamingDataset::Open(o);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(*ds) : nullptr;
  }

  // After a failed read: the failed shard is not under its name, no
  // temporary is left, and what the cache accounts is the shard files on
  // disk.
  void ExpectCleanCache(StreamingDataset& ds, const std::string& shard) {
    const std::vector<std::string> names = NamesIn(local_.path());
    EXPECT_EQ(std::count(names.begin(), names.end(), shard), 0) << shard << " is visible";
    for (const std::string& n : names) {
      EXPECT_EQ(n.find(".sluice-tmp."), std::string::npos) << n << " left behind";
    }
    EXPECT_EQ(ds.Metrics().cache_bytes_on_disk, testing::ShardBytesOnDisk(local_.path()));
  }

  // The fault gone, the same dataset reads the whole epoch, the failed
  // shard included.
  void ExpectRetryReadsEverything(StreamingDataset& ds, const std::string& shard) {
    env_.Clear();
    std::vector<std::string> got;
    Status st = ReadInOrder(ds, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(got, want_);
    EXPECT_TRUE(FileExists(JoinPath(local_.path(), shard)));
    EXPECT_EQ(ds.Metrics().cache_bytes_on_disk, testing::ShardBytesOnDisk(local_.path()));
  }

  // The samples read before a failure are the remote's first ones.
  void ExpectPrefixOfEpoch(const std::vector<std::string>& got) {
    ASSERT_LE(got.size(), want_.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want_[i]) << i;
  }

  std::string Temporaries(const std::string& shard) const {
    return "*/." + shard + ".sluice-tmp.*";
  }

  // The start of the consumer's error about shard `i`: the prefetcher met it
  // opening the shard of its first sample.
  std::string ErrorAbout(size_t i) const {
    return "i/o error: prefetching sample position " + std::to_string(first_sample_[i]) +
           ": shard cache '" + local_.path() + "': fetching shard " + std::to_string(i) + " '" +
           shards_[i] + "': ";
  }

  // What the HTTP download of shard `i` adds before the write's error: the
  // shard is smaller than a write block, so its one write is all of it.
  std::string DownloadOf(size_t i) const {
    const std::string url = server_->url() + "/" + shards_[i];
    return "downloading " + url + ": " + url + ": GET " + url + ": writing " +
           std::to_string(bytes_[i]) + " bytes at offset 0: ";
  }

  ScratchDir remote_, local_;
  std::vector<std::string> shards_;
  std::vector<uint64_t> bytes_;         // each shard's file size
  std::vector<uint64_t> first_sample_;  // each shard's first sample
  std::vector<std::string> want_;
  std::optional<StallingFileServer> server_;
  FaultEnv env_;
};

TEST_F(DatasetFaultTest, AFullDiskDuringAShardsDownloadIsAnErrorNamingItAndTheRetryReadsIt) {
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  const std::string shard = shards_[2];
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(shard), .nth = 1, .err = ENOSPC});
  std::vector<std::string> got;
  Status st = ReadInOrder(*ds, &got);
  ASSERT_EQ(env_.fired(), 1);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(tmp.rfind(local_.path() + "/." + shard + ".sluice-tmp.", 0), 0u) << tmp;
  EXPECT_EQ(st.ToString(), ErrorAbout(2) + DownloadOf(2) + "cannot write " + tmp +
                               ": No space left on device");
  ExpectPrefixOfEpoch(got);
  ExpectCleanCache(*ds, shard);
  ExpectRetryReadsEverything(*ds, shard);
}

TEST_F(DatasetFaultTest, AnIoErrorMidDownloadIsAnErrorNamingTheShardAndTheRetryReadsIt) {
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  const std::string shard = shards_[1];
  // Mid-write: the first write(2) puts 100 bytes on disk, the next fails.
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(shard), .nth = 1,
            .short_write = true, .short_bytes = 100});
  env_.Add({.op = FsOp::kWrite, .path_pattern = Temporaries(shard), .nth = 2, .err = EIO});
  std::vector<std::string> got;
  Status st = ReadInOrder(*ds, &got);
  ASSERT_EQ(env_.fired(), 2);
  const std::string tmp = env_.last_fired_path();
  EXPECT_EQ(tmp.rfind(local_.path() + "/." + shard + ".sluice-tmp.", 0), 0u) << tmp;
  EXPECT_EQ(st.ToString(),
            ErrorAbout(1) + DownloadOf(1) + "cannot write " + tmp + ": Input/output error");
  ExpectPrefixOfEpoch(got);
  ExpectCleanCache(*ds, shard);
  ExpectRetryReadsEverything(*ds, shard);
}

TEST_F(DatasetFaultTest, AFailedRenameWhenAShardIsCommittedLeavesNothingAndTheRetryReadsIt) {
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  const std::string shard = shards_[3];
  const std::string final_path = JoinPath(local_.path(), shard);
  env_.Add({.op = FsOp::kRename, .path_pattern = final_path, .nth = 1, .err = EIO});
  std::vector<std::string> got;
  Status st = ReadInOrder(*ds, &got);
  ASSERT_EQ(env_.fired(), 1);
  const std::string tmp = env_.last_fired_path();  // the rename's source
  EXPECT_EQ(tmp.rfind(local_.path() + "/." + shard + ".sluice-tmp.", 0), 0u) << tmp;
  EXPECT_EQ(st.ToString(), ErrorAbout(3) + "cannot rename " + tmp + " onto " + final_path +
                               ": Input/output error");
  ExpectPrefixOfEpoch(got);
  ExpectCleanCache(*ds, shard);
  ExpectRetryReadsEverything(*ds, shard);
}

}  // namespace
}  // namespace sluice

// The cache's disk failing under a stream: full (ENOSPC), read-only, and a
// shard deleted while the job runs. Each ends in a clear error or a
// recovery, never a wrong sample. The full and read-only disks are small
// tmpfs mounts made here (root only; skipped elsewhere).
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

// Reads epoch `epoch` in order; the ids and their bytes, and the first error.
Status ReadAll(StreamingDataset& ds, int64_t epoch, std::vector<int64_t>* ids_out,
               std::vector<std::string>* bytes) {
  SLUICE_RETURN_IF_ERROR(ds.IterBegin(epoch, 0, 0, 1));
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds.NextBatch(16, ids.data(), &fields));
    if (n == 0) return Status::Ok();
    for (size_t i = 0; i < n; ++i) {
      ids_out->push_back(ids[i]);
      bytes->push_back(testing::FieldBytes(fields[i]));
    }
  }
}

// A tmpfs of `bytes` mounted on a fresh folder, unmounted by the destructor.
class SmallDisk {
 public:
  explicit SmallDisk(uint64_t bytes) {
    ok_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0,
                  ("size=" + std::to_string(bytes)).c_str()) == 0;
    if (!ok_) why_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (ok_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  const std::string& path() const { return dir_.path(); }
  bool MakeReadOnly() {
    return ::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  ScratchDir dir_;
  bool ok_ = false;
  std::string why_;
};

// The epoch's bytes as the remote holds them (no cache in the way).
std::vector<std::string> Expected(const std::string& remote) {
  ScratchDir local;
  auto ds = StreamingDataset::Open(testing::OneStreamOptions(remote, local.path()));
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<int64_t> ids;
  std::vector<std::string> bytes;
  EXPECT_TRUE(ReadAll(**ds, 0, &ids, &bytes).ok());
  return bytes;
}

TEST(DiskFaultsTest, AFullCacheDiskIsAnErrorNamingTheShardAndLeavesNoTemporary) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 2000, 64 << 10);  // ~5 shards of 64 KiB
  std::vector<std::string> want = Expected(remote.path());
  SmallDisk disk(160 << 10);  // room for two shards and the index, not three
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here: " << disk.why();

  DatasetOptions o = testing::OneStreamOptions(remote.path(), disk.path());
  o.fetch_concurrency = 1;  // shards 0 and 1 fit, the third fetched fails
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<int64_t> ids;
  std::vector<std::string> got;
  Status st = ReadAll(**ds, 0, &ids, &got);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("shard.0000"), std::string::npos) << st.message();
  // Every sample delivered before the error is the remote's.
  ASSERT_GT(got.size(), 0u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
  for (const auto& e : fs::directory_iterator(disk.path())) {
    EXPECT_EQ(e.path().filename().string().find(".sluice-tmp."), std::string::npos)
        << e.path() << " left behind";
  }
}

TEST(DiskFaultsTest, AReadOnlyCacheDiskIsAnErrorNamingTheFolder) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 200, 8 << 10);
  SmallDisk disk(1 << 20);
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a tmpfs here: " << disk.why();
  ASSERT_TRUE(disk.MakeReadOnly());
  auto ds = StreamingDataset::Open(testing::OneStreamOptions(remote.path(), disk.path()));
  Status st = ds.ok() ? [&] {
    std::vector<int64_t> ids;
    std::vector<std::string> got;
    return ReadAll(**ds, 0, &ids, &got);
  }()
                      : ds.status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Read-only file system"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(disk.path()), std::string::npos) << st.ToString();
}

// Mosaic fetches a shard again when its cached file vanished (a user or a
// cleaner deleted it): so does Sluice, within the same job.
TEST(DiskFaultsTest, AShardDeletedBetweenEpochsIsFetchedAgain) {
  ScratchDir remote, local;
  testing::WriteSyntheticMds(remote.path(), 600, 8 << 10);
  std::vector<std::string> want = Expected(remote.path());
  auto ds = StreamingDataset::Open(testing::OneStreamOptions(remote.path(), local.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<int64_t> ids;
  std::vector<std::string> got;
  ASSERT_TRUE(ReadAll(**ds, 0, &ids, &got).ok());
  ASSERT_EQ(got, want);
  std::string victim = JoinPath(local.path(), "shard.00001.mds");
  ASSERT_TRUE(fs::remove(victim));
  ids.clear();
  got.clear();
  Status st = ReadAll(**ds, 0, &ids, &got);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(got, want);
  EXPECT_TRUE(FileExists(victim));
}

// The same, while the shard is mapped by the running reader: the mapping
// keeps the bytes (the inode lives on), so the epoch finishes unchanged.
TEST(DiskFaultsTest, AShardDeletedUnderTheReaderKeepsItsSamples) {
  ScratchDir remote, local;
  testing::WriteSyntheticMds(remote.path(), 600, 8 << 10);
  std::vector<std::string> want = Expected(remote.path());
  auto ds = StreamingDataset::Open(testing::OneStreamOptions(remote.path(), local.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(8);
  std::vector<SampleFields> fields;
  std::vector<std::string> got;
  bool deleted = false;
  for (;;) {
    Result<size_t> n = (*ds)->NextBatch(8, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    for (size_t i = 0; i < *n; ++i) got.push_back(testing::FieldBytes(fields[i]));
    if (!deleted) {
      // Every cached shard file goes while the first batch's shard is open.
      for (const auto& e : fs::directory_iterator(local.path())) {
        if (e.path().extension() == ".mds") fs::remove(e.path());
      }
      deleted = true;
    }
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace sluice

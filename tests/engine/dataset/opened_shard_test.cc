// Shards whose files are on disk but not in the page cache (a warm cache
// read back after a restart): reading a sample reads that sample, not the
// shard around it (OpenedShard::on_disk).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/mds/mds_writer.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

constexpr int kOpenedSamples = 64;
constexpr size_t kSampleBytes = 200 << 10;

std::string SampleData(int i) {
  std::string data(kSampleBytes, '\0');
  for (size_t k = 0; k < data.size(); ++k) {
    data[k] = static_cast<char>((i * 131 + k * 7 + k / 4096) & 0xff);
  }
  return data;
}

// Drops `path`'s pages from the page cache; false when they stay (tmpfs).
bool Evict(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  auto map = MappedFile::Open(path);
  return map.ok() && !map->Resident();
}

// kOpenedSamples samples of SampleData as MDS in `dir`, in shards of 4 MiB (past
// the huge-page hint's 2 MiB).
void WriteSamples(const std::string& dir) {
  ShardedWriterOptions w;
  w.size_limit = 4 << 20;
  auto writer = MdsWriter::Create(dir, {{"data", "bytes"}}, w);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (int i = 0; i < kOpenedSamples; ++i) ASSERT_TRUE((*writer)->WriteFields({SampleData(i)}).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
}

// The dataset in `dir` read in place, its epoch-0 pass begun for one
// worker; the first sample is not peeked, so every read is the pass's own.
Result<std::unique_ptr<StreamingDataset>> BeginPass(const std::string& dir, int64_t batch_size,
                                                    bool shuffle = false) {
  DatasetOptions o = testing::OneStreamOptions("", dir);
  o.plan.shuffle = shuffle;
  o.plan.shuffle_seed = 5;
  o.plan.batch_size = batch_size;
  o.peek_first_sample = false;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<StreamingDataset> ds, StreamingDataset::Open(o));
  SLUICE_RETURN_IF_ERROR(ds->IterBegin(0, 0, 0, 1));
  return ds;
}

// Bytes of `path` in the page cache.
uint64_t ResidentBytes(const std::string& path) {
  auto map = MappedFile::Open(path);
  if (!map.ok() || map->size() == 0) return 0;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((map->size() + page - 1) / page);
  if (::mincore(const_cast<char*>(map->data().data()), map->size(), in_core.data()) != 0) return 0;
  uint64_t pages = 0;
  for (unsigned char c : in_core) pages += c & 1;
  return pages * page;
}

TEST(OpenedShardOnDisk, AShuffledFirstBatchReadsItsSamplesNotTheShards) {
  testing::ScratchDir data;
  ASSERT_NO_FATAL_FAILURE(WriteSamples(data.path()));  // 4 shards of 20 samples or fewer
  std::vector<std::string> shards;
  for (const auto& e : std::filesystem::directory_iterator(data.path())) {
    if (e.path().extension() == ".mds") shards.push_back(e.path().string());
  }
  ASSERT_EQ(shards.size(), 4u);
  for (const std::string& s : shards) {
    if (!Evict(s)) GTEST_SKIP() << "the page cache keeps " << s << " (tmpfs?)";
  }

  // The prefetch threads populate shards after a batch of 16 samples.
  auto ds = BeginPass(data.path(), 16, /*shuffle=*/true);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int64_t> ids(4);
  std::vector<SampleFields> out;
  size_t got = 0;
  while (got < 4) {
    auto n = (*ds)->NextBatch(4 - got, ids.data() + got, &out);
    ASSERT_TRUE(n.ok()) << n.status().message();
    ASSERT_GT(*n, 0u);
    for (size_t k = 0; k < *n; ++k) {
      ASSERT_EQ(out[k].fields.size(), 1u);
      EXPECT_EQ(out[k].fields[0], SampleData(static_cast<int>(ids[got + k]))) << ids[got + k];
    }
    got += *n;
  }
  uint64_t resident = 0;
  for (const std::string& s : shards) resident += ResidentBytes(s);
  // At most the first batch's 16 samples (the four taken, the rest asked
  // for ahead together) and each shard's header, of 64 samples. Before: the
  // prefetch threads faulted whole shards in, and a fault read 2-4 MiB
  // around it.
  EXPECT_LT(resident, 16 * kSampleBytes + (1u << 20)) << resident << " bytes read";

  // The rest of the epoch, through shards read on disk and populated.
  std::vector<std::string> bytes;
  std::vector<int64_t> rest = testing::ReadEpoch(**ds, 0, 4, 0, 1, 16, &bytes);
  std::vector<int64_t> all(ids);
  all.insert(all.end(), rest.begin(), rest.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<size_t>(kOpenedSamples));
  for (int i = 0; i < kOpenedSamples; ++i) EXPECT_EQ(all[i], i);
  for (size_t k = 0; k < rest.size(); ++k) {
    EXPECT_EQ(bytes[k], SampleData(static_cast<int>(rest[k])) + '\xff') << rest[k];
  }
}

// A call for more than the first batch, its shards on disk, ends with the
// first batch: samples past it would be disk reads the first batch waits
// behind (the caller's next call goes on from there).
TEST(OpenedShardOnDisk, AFirstCallEndsWithTheFirstBatch) {
  testing::ScratchDir data;
  ASSERT_NO_FATAL_FAILURE(WriteSamples(data.path()));
  for (const auto& e : std::filesystem::directory_iterator(data.path())) {
    if (e.path().extension() != ".mds") continue;
    if (!Evict(e.path().string())) GTEST_SKIP() << "the page cache keeps " << e.path();
  }
  auto ds = BeginPass(data.path(), 8);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int64_t> ids(kOpenedSamples);
  std::vector<SampleFields> out;
  auto n = (*ds)->NextBatch(kOpenedSamples, ids.data(), &out);
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_GT(*n, 0u);
  EXPECT_LE(*n, 8u);
  for (size_t k = 0; k < *n; ++k) {
    EXPECT_EQ(ids[k], static_cast<int64_t>(k));  // in order
    EXPECT_EQ(out[k].fields[0], SampleData(static_cast<int>(k))) << k;
  }
  // The same pass goes on from there with the next calls, exact.
  size_t got = *n;
  while (got < static_cast<size_t>(kOpenedSamples)) {
    auto more = (*ds)->NextBatch(kOpenedSamples - got, ids.data() + got, &out);
    ASSERT_TRUE(more.ok()) << more.status().message();
    ASSERT_GT(*more, 0u);
    for (size_t k = 0; k < *more; ++k) {
      ASSERT_EQ(ids[got + k], static_cast<int64_t>(got + k));
      EXPECT_EQ(out[k].fields[0], SampleData(static_cast<int>(got + k))) << got + k;
    }
    got += *more;
  }
  auto end = (*ds)->NextBatch(1, ids.data(), &out);
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(*end, 0u);
}

// Reading by id during a pass (what a subclass's __getitem__ does) reads
// the shard the pass has open, not a map of its own: mapping a 64 MiB shard
// again for each sample of a shuffled pass cost 0.3 ms an image.
TEST(OpenedShardShared, AGetDuringAPassReadsThePassesMap) {
  testing::ScratchDir data;
  ASSERT_NO_FATAL_FAILURE(WriteSamples(data.path()));
  auto ds = BeginPass(data.path(), 4);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int64_t> ids(2);
  std::vector<SampleFields> batch;
  auto n = (*ds)->NextBatch(2, ids.data(), &batch);
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_GT(*n, 0u);
  const char* pass_bytes = batch[0].fields[0].data();
  SampleFields got;
  ASSERT_TRUE((*ds)->Get(static_cast<uint64_t>(ids[0]), &got).ok());
  EXPECT_EQ(got.fields[0], SampleData(static_cast<int>(ids[0])));
  EXPECT_EQ(got.fields[0].data(), pass_bytes);  // the same map
}

}  // namespace
}  // namespace sluice

// Hostile sizes through the whole engine: a raw size the format cannot hold
// is refused when the dataset opens; a zstd shard declaring the largest size
// and a gz bomb are decompressed on the prefetch thread, and the consumer
// gets an error (no abort) while memory stays within a small budget.
#include <gtest/gtest.h>

#include <string>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/codec/compression.h"
#include "formats/index/index.h"
#include "tests/base/address_limit.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::kAddressLimitWorks;
using testing::RunWithAddressLimit;
using testing::ScratchDir;

constexpr uint64_t kHeadroom = 256 << 20;  // address space the child may add

// Opens the dataset and iterates one epoch; "ok" or the first error.
std::string ReadEpochOutcome(const DatasetOptions& o) {
  auto ds = StreamingDataset::Open(o);
  if (!ds.ok()) return ds.status().ToString();
  Status st = (*ds)->IterBegin(0, 0, 0, 1);
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  while (st.ok()) {
    auto n = (*ds)->NextBatch(16, ids.data(), &fields);
    if (!n.ok()) return n.status().ToString();
    if (*n == 0) return "ok";
  }
  return st.ToString();
}

class DeclaredSizeTest : public ::testing::Test {
 protected:
  // A compressed dataset whose shard 1 gets `zip` as its stored file and
  // `raw_bytes` as its declared raw size (no hashes: nothing else objects).
  void Write(const std::string& compression, const std::string& zip, uint64_t raw_bytes) {
    testing::WriteSyntheticMds(remote_.path(), 200, 2000, compression);
    const std::string index_path = JoinPath(remote_.path(), "index.json");
    auto index = ParseIndex(*ReadFile(index_path), index_path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_GE(index->shards.size(), 3u);
    ShardEntry& e = index->shards[1];
    raw_name_ = e.raw_data.basename;
    zip_name_ = e.zip_data->basename;
    e.raw_data.bytes = raw_bytes;
    e.raw_data.hashes.clear();
    e.zip_data->bytes = zip.size();
    e.zip_data->hashes.clear();
    ASSERT_TRUE(WriteFileAtomic(JoinPath(remote_.path(), zip_name_), zip).ok());
    auto text = SerializeIndexSorted(*index);
    ASSERT_TRUE(text.ok());
    ASSERT_TRUE(WriteFileAtomic(index_path, *text).ok());
  }

  ScratchDir remote_, cache_;
  std::string raw_name_, zip_name_;
};

TEST_F(DeclaredSizeTest, RawSizeBeyondTheFormatIsRefusedAtOpenNamingTheShard) {
  Write("gz", *Compress(*ParseCompression("gz"), std::string(1 << 20, '\0')), uint64_t{1} << 40);
  auto ds = StreamingDataset::Open(testing::OneStreamOptions(remote_.path(), cache_.path()));
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().ToString(),
            "corrupt: stream 0 (" + cache_.path() + "): " + JoinPath(cache_.path(), "index.json") +
                ": shard 1: field 'raw_data.bytes': '" + raw_name_ +
                "' declares 1099511627776 bytes, more than 32-bit offsets address (4294967295)");
}

// 17 bytes: a single-segment zstd frame declaring 4294967295 bytes (the
// largest shard file) and holding one; the index agrees on the size.
TEST_F(DeclaredSizeTest, ZstdShardDeclaringTheLargestSizeIsAnErrorNotAnAllocation) {
  if (!kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  std::string frame("\x28\xb5\x2f\xfd\xe0\xff\xff\xff\xff\x00\x00\x00\x00\x0b\x00\x00x", 17);
  Write("zstd", frame, kMaxShardFileBytes);
  const std::string got = RunWithAddressLimit(
      kHeadroom, [&] { return ReadEpochOutcome(testing::OneStreamOptions(remote_.path(), cache_.path())); });
  // Shard 0 holds positions 0-11; the download is tried 1 + download_retry times.
  EXPECT_EQ(got, "corrupt: prefetching sample position 12: '" + raw_name_ + "' from " +
                     JoinPath(remote_.path(), zip_name_) +
                     " is corrupt after 3 download(s) (expected 17 bytes): shard cache '" +
                     cache_.path() + "': fetching shard 1 '" + raw_name_ + "': " + zip_name_ +
                     ": zstd data is corrupt: Frame requires too much memory for decoding (in "
                     "the frame at input offset 0)");
}

// 512 MiB of zeros in about 520 KB of gz, and an index claiming 4294967295
// raw bytes, read by a child that may add 256 MiB of address space: the
// shard is decoded into its cache file a chunk at a time (it used to grow a
// buffer until memory ran out), so the consumer gets the size mismatch,
// naming the file, after the download's tries.
TEST_F(DeclaredSizeTest, GzBombOnThePrefetchThreadIsAnErrorForTheConsumer) {
  if (!kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  const std::string member = *Compress(*ParseCompression("gz"), std::string(16 << 20, '\0'));
  std::string bomb;
  for (int i = 0; i < 32; ++i) bomb += member;
  Write("gz", bomb, kMaxShardFileBytes);
  DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache_.path());
  o.streams[0].download_retry = 0;
  const std::string got = RunWithAddressLimit(kHeadroom, [&] { return ReadEpochOutcome(o); });
  EXPECT_EQ(got, "corrupt: prefetching sample position 12: '" + raw_name_ + "' from " +
                     JoinPath(remote_.path(), zip_name_) +
                     " is corrupt after 1 download(s) (expected " + std::to_string(bomb.size()) +
                     " bytes): shard cache '" + cache_.path() + "': fetching shard 1 '" +
                     raw_name_ + "': " + zip_name_ +
                     ": decompresses to 536870912 bytes, index.json says 4294967295");
}

}  // namespace
}  // namespace sluice

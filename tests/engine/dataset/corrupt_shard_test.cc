// A shard that stays corrupt after 1 + download_retry downloads (one, when
// the remote says it is another size): a clear error by default, skipped
// with counters under skip_corrupt_shards.
#include <filesystem>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

// Reads the whole epoch; returns the ids and the first error (OK if none).
Status ReadAll(StreamingDataset& ds, std::vector<int64_t>* all) {
  SLUICE_RETURN_IF_ERROR(ds.IterBegin(0, 0, 0, 1));
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds.NextBatch(16, ids.data(), &fields));
    if (n == 0) return Status::Ok();
    all->insert(all->end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

class CorruptShardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteSyntheticMds(remote_.path(), 200, 2000, std::nullopt, {"sha1"});
    auto reader = DatasetReader::Open(remote_.path());
    ASSERT_TRUE(reader.ok());
    const ShardEntry& e = (*reader)->index().shards[2];
    victim_ = e.raw_data.basename;
    bytes_ = e.raw_data.bytes;
    sha1_ = e.raw_data.hashes.at("sha1");
    first_ = 0;
    for (size_t i = 0; i < 2; ++i) first_ += (*reader)->index().shards[i].samples;
    samples_ = e.samples;
    num_samples_ = (*reader)->num_samples();
  }
  // Changes the remote copy of shard 2: same size with flipped bytes, or
  // `cut` bytes shorter.
  void Corrupt(size_t cut) {
    std::string path = JoinPath(remote_.path(), victim_);
    auto data = ReadFile(path);
    ASSERT_TRUE(data.ok());
    std::string bad = data->substr(0, data->size() - cut);
    bad[bad.size() / 2] ^= 0x5a;
    ASSERT_TRUE(WriteFileAtomic(path, bad).ok());
  }
  std::vector<int64_t> Without(const std::vector<int64_t>& plan) const {
    std::vector<int64_t> out;
    for (int64_t id : plan) {
      if (id < static_cast<int64_t>(first_) || id >= static_cast<int64_t>(first_ + samples_)) {
        out.push_back(id);
      }
    }
    return out;
  }

  // Opens `o` skipping corrupt shards (sha1 checked), reads one whole epoch
  // and checks it is the plan without the victim's samples, all counted.
  void ReadEpochSkipping(DatasetOptions o, std::unique_ptr<StreamingDataset>* out) {
    o.streams[0].validate_hash = "sha1";
    o.skip_corrupt_shards = true;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().message();
    auto plan = (*ds)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(plan.ok());
    std::vector<int64_t> got;
    Status st = ReadAll(**ds, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(got, Without(*plan));
    EXPECT_EQ((*ds)->counters().samples_skipped, samples_);
    *out = std::move(*ds);
  }

  ScratchDir remote_, cache_;
  std::string victim_, sha1_;
  uint64_t bytes_ = 0, first_ = 0, samples_ = 0, num_samples_ = 0;
};

TEST_F(CorruptShardTest, WrongSizeIsAnErrorNamingTheShardTheUrlAndTheExpectedSize) {
  Corrupt(7);
  DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache_.path());
  // A window over the whole epoch: shards are opened in order only, so the
  // scan stops at the victim before opening any later shard (a smaller
  // window also opens shards beyond itself, racing with that stop).
  o.predownload = 1000;
  o.fetch_concurrency = 1;  // in order only: one shard at a time
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  std::vector<int64_t> got;
  Status st = ReadAll(**ds, &got);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kCorrupt) << st.message();
  const std::string& m = st.message();
  // The folder said the file is another size than the index's: no
  // download heals that (DownloadMayHeal), so it is downloaded once.
  EXPECT_NE(m.find("'" + victim_ + "' from " + JoinPath(remote_.path(), victim_) +
                   " is corrupt after 1 download(s) (expected " + std::to_string(bytes_) +
                   " bytes)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("index.json says " + std::to_string(bytes_)), std::string::npos) << m;
  // Every sample before the shard, then the error (again on the next call).
  ASSERT_EQ(got.size(), first_);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int64_t>(i));
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  auto again = (*ds)->NextBatch(16, ids.data(), &fields);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(), st.message());
  EXPECT_EQ((*ds)->counters().shards_skipped, 0u);
  DatasetCounters c = (*ds)->counters();
  EXPECT_EQ(c.shards_downloaded, 2u);
  EXPECT_FALSE(FileExists(JoinPath(cache_.path(), victim_)));
  for (const auto& e : fs::directory_iterator(cache_.path())) {
    EXPECT_FALSE(ParseTempName(e.path().filename().string()).has_value()) << e.path();
  }
}

TEST_F(CorruptShardTest, HashMismatchIsAnErrorNamingTheExpectedHash) {
  Corrupt(0);
  DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache_.path());
  o.streams[0].validate_hash = "sha1";
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok());
  std::vector<int64_t> got;
  Status st = ReadAll(**ds, &got);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kHashMismatch) << st.message();
  EXPECT_NE(st.message().find(JoinPath(remote_.path(), victim_) + " is corrupt after 3 download(s) (expected " +
                              std::to_string(bytes_) + " bytes, sha1 " + sha1_ + ")"),
            std::string::npos)
      << st.message();
}

TEST_F(CorruptShardTest, SkipCorruptShardsSkipsItsSamplesAndCountsThem) {
  for (size_t cut : {size_t{7}, size_t{0}}) {
    SCOPED_TRACE(cut ? "wrong size" : "hash mismatch");
    Corrupt(cut);
    ScratchDir cache;
    DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache.path());
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 4;
    std::unique_ptr<StreamingDataset> ds;
    ASSERT_NO_FATAL_FAILURE(ReadEpochSkipping(o, &ds));
    EXPECT_EQ(ds->counters().shards_skipped, 1u);
    // Random access cannot skip: the sample's shard is named.
    SampleFields f;
    Status get = ds->Get(first_, &f);
    EXPECT_EQ(get.code(), StatusCode::kCorrupt);
    EXPECT_NE(get.message().find("skipped as corrupt"), std::string::npos) << get.message();
    ASSERT_TRUE(ds->Get(first_ + samples_, &f).ok());
    // Restore the remote for the next round.
    testing::WriteSyntheticMds(remote_.path(), 200, 2000, std::nullopt, {"sha1"});
  }
}

// A skipped shard longer than the prefetch window, read in order: a batch
// that meets only skipped samples must go on past the window (and wait for
// the next shard) rather than end the epoch early; with and without a
// cache limit.
TEST_F(CorruptShardTest, SkippedRunLongerThanTheWindowDoesNotEndTheEpoch) {
  Corrupt(0);
  ASSERT_GT(samples_, 4u);
  for (bool limit : {false, true}) {
    SCOPED_TRACE(limit ? "cache_limit" : "no cache_limit");
    ScratchDir cache;
    DatasetOptions o = testing::OneStreamOptions(remote_.path(), cache.path());
    o.predownload = 4;
    if (limit) o.cache_limit = uint64_t{1} << 30;
    std::unique_ptr<StreamingDataset> ds;
    ASSERT_NO_FATAL_FAILURE(ReadEpochSkipping(o, &ds));
  }
}

TEST(SkipCorruptShardsOption, ParsedFromJsonOffByDefault) {
  auto d = ParseDatasetOptions(R"({"local": "/x"})");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->skip_corrupt_shards);
  auto on = ParseDatasetOptions(R"({"local": "/x", "skip_corrupt_shards": true})");
  ASSERT_TRUE(on.ok()) << on.status().message();
  EXPECT_TRUE(on->skip_corrupt_shards);
  auto bad = ParseDatasetOptions(R"({"local": "/x", "skip_corrupt_shards": 1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("skip_corrupt_shards"), std::string::npos);
}

}  // namespace
}  // namespace sluice

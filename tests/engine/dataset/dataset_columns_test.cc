// DatasetColumns and a StreamingDataset whose streams have different
// columns (as Mosaic's may): every stream's names, first seen first, and
// each sample's fields at its columns' places, absent ones null.
#include "engine/dataset/dataset_columns.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::WriteSyntheticMds;

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";

TEST(DatasetColumns, EveryStreamsNamesFirstSeenFirst) {
  DatasetColumns c;
  ASSERT_TRUE(c.AddStream({"b", "a"}).ok());
  ASSERT_TRUE(c.AddStream({}).ok());  // a stream without shards
  ASSERT_TRUE(c.AddStream({"a", "c", "b"}).ok());
  EXPECT_EQ(c.names(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(c.stream_columns(0), (std::vector<uint32_t>{0, 1}));
  EXPECT_TRUE(c.stream_columns(1).empty());
  EXPECT_EQ(c.stream_columns(2), (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(c.stream_names(2), (std::vector<std::string>{"a", "c", "b"}));
  // Stream 0 was added before "c" existed: it lacks it.
  EXPECT_TRUE(c.StreamHas(0, 1));
  EXPECT_FALSE(c.StreamHas(0, 2));
  EXPECT_FALSE(c.StreamHas(1, 0));
  EXPECT_TRUE(c.StreamHas(2, 2));
}

TEST(DatasetColumns, ANameTwiceInAStreamIsCorrupt) {
  DatasetColumns c;
  Status s = c.AddStream({"a", "b", "a"});
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.message(), "column 'a' is named more than once");
}

// A refused stream adds nothing: not its new names before the duplicate.
TEST(DatasetColumns, ARefusedStreamLeavesTheColumnsAsTheyWere) {
  DatasetColumns c;
  ASSERT_TRUE(c.AddStream({"a", "b"}).ok());
  EXPECT_EQ(c.AddStream({"c", "a", "a"}).code(), StatusCode::kCorrupt);
  EXPECT_EQ(c.names(), (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(c.AddStream({"b", "d"}).ok());
  EXPECT_EQ(c.names(), (std::vector<std::string>{"a", "b", "d"}));
  EXPECT_EQ(c.stream_names(1), (std::vector<std::string>{"b", "d"}));
}

DatasetOptions TwoStreams(const std::string& first, const std::string& second_remote,
                          const std::string& second_local) {
  DatasetOptions o;
  StreamOptions a, b;
  a.local = first;
  b.remote = second_remote;
  b.local = second_local;
  o.streams = {a, b};
  o.world.rank = 0;
  o.world.world_size = 1;
  o.world.local_rank = 0;
  o.world.local_world_size = 1;
  o.wait_timeout = std::chrono::seconds(20);
  return o;
}

// One sample's fields as "name=bytes", absent ones "name:absent".
std::vector<std::string> Described(const std::vector<std::string>& names, const SampleFields& f) {
  std::vector<std::string> out;
  for (size_t c = 0; c < names.size(); ++c) {
    out.push_back(f.fields[c].data() ? names[c] + "=" + std::string(f.fields[c])
                                     : names[c] + ":absent");
  }
  return out;
}

TEST(StreamingDataset, StreamsWithOtherColumnsLayTheirFieldsOutByTheDatasetsColumns) {
  // Stream 0: x: int, y: str (10 samples, read in place). Stream 1: data:
  // bytes, id: str (synthetic, 30 samples, through the cache).
  ScratchDir remote, cache;
  WriteSyntheticMds(remote.path(), 30, 1000);
  const std::string first = kMds + "single_shard_no_limit";
  auto ds = StreamingDataset::Open(TwoStreams(first, remote.path(), cache.path()));
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  const std::vector<std::string> names{"x", "y", "data", "id"};
  EXPECT_EQ((*ds)->column_names(), names);
  EXPECT_EQ((*ds)->column_encodings(), std::vector<std::string>(4, StreamingDataset::kMixed));
  EXPECT_EQ((*ds)->stream_column_encodings(0), (std::vector<std::string>{"int", "str", "", ""}));
  EXPECT_EQ((*ds)->stream_column_encodings(1), (std::vector<std::string>{"", "", "bytes", "str"}));
  EXPECT_EQ((*ds)->format(), "mds");
  ASSERT_EQ((*ds)->num_samples(), 40u);

  // The expected fields: each stream's own reader's, at its columns' places.
  auto own0 = DatasetReader::Open(first);
  auto own1 = DatasetReader::Open(remote.path());
  ASSERT_TRUE(own0.ok() && own1.ok());
  auto expected = [&](uint64_t id) {
    SampleFields f;
    std::vector<std::string> out;
    if (id < 10) {
      EXPECT_TRUE((*own0)->Read(id, &f).ok());
      out = {"x=" + std::string(f.fields[0]), "y=" + std::string(f.fields[1]), "data:absent",
             "id:absent"};
    } else {
      EXPECT_TRUE((*own1)->Read(id - 10, &f).ok());
      out = {"x:absent", "y:absent", "data=" + std::string(f.fields[0]),
             "id=" + std::string(f.fields[1])};
    }
    return out;
  };
  SampleFields f;
  for (uint64_t id : {0u, 9u, 10u, 39u}) {
    ASSERT_TRUE((*ds)->Get(id, &f).ok());
    EXPECT_EQ(Described(names, f), expected(id)) << id;
  }
  (*ds)->Release();
  // Sample 10 is the synthetic one with id "sample-0".
  ASSERT_TRUE((*ds)->Get(10, &f).ok());
  EXPECT_EQ(std::string(f.fields[3]), "sample-0");
  (*ds)->Release();

  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(7);
  std::vector<SampleFields> out;
  int64_t next = 0;
  while (true) {
    auto n = (*ds)->NextBatch(7, ids.data(), &out);
    ASSERT_TRUE(n.ok()) << n.status().message();
    if (*n == 0) break;
    for (size_t k = 0; k < *n; ++k, ++next) {
      ASSERT_EQ(ids[k], next);
      EXPECT_EQ(Described(names, out[k]), expected(static_cast<uint64_t>(next))) << next;
    }
  }
  EXPECT_EQ(next, 40);
}

}  // namespace
}  // namespace sluice

// MdsShardReader on hand-made shards: one test per kind of bad input, each
// with its exact error; plus random damage to a real shard (run under ASan).
#include "formats/mds/mds_shard_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

#include "base/bytes.h"
#include "base/file.h"
#include "tests/formats/mds/compat_util.h"

namespace sluice {
namespace {

std::vector<ColumnEncoding> Columns() {
  return {ParseColumnEncoding("int", "id").value(), ParseColumnEncoding("str", "s").value()};
}

// n=2; table ends at 16; config `{"x": 1}` (8 bytes) ends at 24;
// sample 0 = [len 2][id 7]["hi"] (14 bytes, 24..38),
// sample 1 = [len 0][id 8] (12 bytes, 38..50).
std::string GoodShard() {
  std::string s;
  AppendLE<uint32_t>(s, 2);
  for (uint32_t off : {24u, 38u, 50u}) AppendLE<uint32_t>(s, off);
  s += "{\"x\": 1}";
  AppendLE<uint32_t>(s, 2);
  AppendLE<int64_t>(s, 7);
  s += "hi";
  AppendLE<uint32_t>(s, 0);
  AppendLE<int64_t>(s, 8);
  return s;
}

void SetU32(std::string& s, size_t at, uint32_t v) {
  std::string w;
  AppendLE<uint32_t>(w, v);
  s.replace(at, 4, w);
}

Status OpenError(const std::string& shard) {
  auto r = MdsShardReader::Open(shard, "shard.00007.mds", Columns());
  EXPECT_FALSE(r.ok());
  return r.ok() ? Status::Ok() : r.status();
}

Status SampleError(const std::string& shard, uint32_t i) {
  auto r = MdsShardReader::Open(shard, "shard.00007.mds", Columns());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return r.status();
  std::vector<std::string_view> fields;
  Status st = r->ReadSample(i, &fields);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(r->ValidateAllSamples().ToString(), st.ToString());
  return st;
}

TEST(MdsShardReader, ReadsGoodShard) {
  const std::string shard = GoodShard();
  auto r = MdsShardReader::Open(shard, "shard.00007.mds", Columns());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_samples(), 2u);
  EXPECT_EQ(r->config_json(), "{\"x\": 1}");
  std::vector<std::string_view> f;
  ASSERT_TRUE(r->ReadSample(0, &f).ok());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].data(), shard.data() + 28);
  EXPECT_EQ(LoadLE<int64_t>(f[0].data()), 7);
  EXPECT_EQ(f[1], "hi");
  ASSERT_TRUE(r->ReadSample(1, &f).ok());
  EXPECT_EQ(LoadLE<int64_t>(f[0].data()), 8);
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(r->ReadField(0, 1).value(), "hi");
  EXPECT_TRUE(r->ValidateAllSamples().ok());
  EXPECT_EQ(r->SampleBytes(1).value().size(), 12u);
}

TEST(MdsShardReader, ZeroSampleShard) {
  std::string s;
  AppendLE<uint32_t>(s, 0);
  AppendLE<uint32_t>(s, 10);
  s += "{}";
  auto r = MdsShardReader::Open(s, "shard.00000.mds", Columns());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->num_samples(), 0u);
  EXPECT_TRUE(r->ValidateAllSamples().ok());
}

TEST(MdsShardReader, TruncatedBelowHeader) {
  EXPECT_EQ(OpenError(GoodShard().substr(0, 7)).ToString(),
            "corrupt: shard.00007.mds: truncated: 7 bytes, expected at least 8 (sample count and "
            "one offset)");
  EXPECT_EQ(OpenError("").code(), StatusCode::kCorrupt);
}

TEST(MdsShardReader, AbsurdSampleCount) {
  std::string s = GoodShard();
  SetU32(s, 0, 0xffffffff);
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: sample count 4294967295 at offset 0 needs an offsets table "
            "ending at 17179869188, past the file size 50");
}

TEST(MdsShardReader, TruncatedInsideSamples) {
  EXPECT_EQ(OpenError(GoodShard().substr(0, 45)).ToString(),
            "corrupt: shard.00007.mds: offsets[2] = 50 at offset 12, expected between 38 and the "
            "file size 45");
}

TEST(MdsShardReader, FirstOffsetInsideTable) {
  std::string s = GoodShard();
  SetU32(s, 4, 12);
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: offsets[0] = 12 at offset 4, expected the end of the "
            "config, between 16 and the file size 50");
}

TEST(MdsShardReader, FirstOffsetPastEnd) {
  std::string s = GoodShard();
  SetU32(s, 4, 51);
  EXPECT_EQ(OpenError(s).code(), StatusCode::kCorrupt);
  EXPECT_NE(OpenError(s).message().find("offsets[0] = 51"), std::string::npos);
}

TEST(MdsShardReader, ConfigNotAnObject) {
  std::string s = GoodShard();
  SetU32(s, 4, 20);  // config = `{"x"`, and sample 0 starts inside it
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: the config at offset 16 (4 bytes, up to offsets[0]) is not "
            "a JSON object");
}

TEST(MdsShardReader, OffsetsNotMonotonic) {
  std::string s = GoodShard();
  SetU32(s, 8, 23);
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: offsets[1] = 23 at offset 8, expected between 24 and the "
            "file size 50");
}

TEST(MdsShardReader, OffsetOutsideShard) {
  std::string s = GoodShard();
  SetU32(s, 8, 4000);
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: offsets[1] = 4000 at offset 8, expected between 24 and the "
            "file size 50");
}

TEST(MdsShardReader, LastOffsetIsNotFileSize) {
  std::string s = GoodShard() + "xx";  // trailing garbage after the last sample
  EXPECT_EQ(OpenError(s).ToString(),
            "corrupt: shard.00007.mds: offsets[2] = 50 at offset 12, expected the file size 52");
}

TEST(MdsShardReader, SizeHeaderPastSampleEnd) {
  std::string s = GoodShard();
  SetU32(s, 24, 3);  // "hi" claims 3 bytes
  EXPECT_EQ(SampleError(s, 0).ToString(),
            "corrupt: shard.00007.mds: sample 0 at offset 36: column 's' (str) of 3 bytes runs "
            "past the sample end at offset 38");
  SetU32(s, 24, 0xffffffff);
  EXPECT_EQ(SampleError(s, 0).code(), StatusCode::kCorrupt);
}

TEST(MdsShardReader, SampleShorterThanSizeHeader) {
  std::string s;
  AppendLE<uint32_t>(s, 1);
  AppendLE<uint32_t>(s, 14);
  AppendLE<uint32_t>(s, 17);
  s += "{}abc";
  EXPECT_EQ(SampleError(s, 0).ToString(),
            "corrupt: shard.00007.mds: sample 0 at offset 14: 3 bytes, expected at least the "
            "4-byte size header");
}

TEST(MdsShardReader, FixedColumnPastSampleEnd) {
  std::string s = GoodShard();
  SetU32(s, 8, 30);  // sample 0 = 6 bytes, sample 1 = 20 bytes
  EXPECT_EQ(SampleError(s, 0).ToString(),
            "corrupt: shard.00007.mds: sample 0 at offset 28: column 'id' (int) of 8 bytes runs "
            "past the sample end at offset 30");
}

TEST(MdsShardReader, SampleLongerThanItsFields) {
  std::string s = GoodShard();
  SetU32(s, 24, 1);  // "h" only: one byte left over
  EXPECT_EQ(SampleError(s, 0).ToString(),
            "corrupt: shard.00007.mds: sample 0 at offset 24: 14 bytes, the size header and "
            "column sizes account for 13");
}

// A lone sample's bytes (as a ranged read gets them) split as the reader
// splits them in the shard, with errors placed at the sample's shard offset.
TEST(SplitMdsSample, SplitsALoneSampleAsTheShardReaderDoes) {
  const std::string shard = GoodShard();
  const std::string lone = shard.substr(24, 14);  // sample 0, copied out
  std::vector<std::string_view> f;
  ASSERT_TRUE(SplitMdsSample(lone, Columns(), "shard.00007.mds", 0, 24, &f).ok());
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].data(), lone.data() + 4);  // views into the lone bytes
  EXPECT_EQ(LoadLE<int64_t>(f[0].data()), 7);
  EXPECT_EQ(f[1], "hi");

  std::string bad = lone;
  SetU32(bad, 0, 3);  // "hi" claims 3 bytes: the same error as in the shard
  EXPECT_EQ(SplitMdsSample(bad, Columns(), "shard.00007.mds", 0, 24, &f).ToString(),
            "corrupt: shard.00007.mds: sample 0 at offset 36: column 's' (str) of 3 bytes runs "
            "past the sample end at offset 38");
  EXPECT_EQ(SplitMdsSample(lone.substr(0, 3), Columns(), "shard.00007.mds", 5, 100, &f).ToString(),
            "corrupt: shard.00007.mds: sample 5 at offset 100: 3 bytes, expected at least the "
            "4-byte size header");
}

TEST(MdsShardReader, OffsetEntryAndTableEndFollowTheLayout) {
  const std::string shard = GoodShard();
  EXPECT_EQ(MdsOffsetsTableEnd(2), 16u);  // where GoodShard's config starts
  EXPECT_EQ(LoadLE<uint32_t>(shard.data() + MdsOffsetEntryAt(1)), 38u);  // sample 1's start
  EXPECT_EQ(LoadLE<uint32_t>(shard.data() + MdsOffsetEntryAt(1) + 4), 50u);  // and end
}

TEST(MdsShardReader, SampleIndexOutOfRange) {
  const std::string shard = GoodShard();
  auto r = MdsShardReader::Open(shard, "shard.00007.mds", Columns());
  ASSERT_TRUE(r.ok());
  std::vector<std::string_view> f;
  Status st = r->ReadSample(2, &f);
  EXPECT_EQ(st.ToString(), "out of range: shard.00007.mds: sample 2 of 2");
  EXPECT_EQ(r->ReadField(0, 2).status().code(), StatusCode::kOutOfRange);
}

TEST(MdsShardReader, ColumnsMustMatchTheirEntry) {
  ShardEntry e;
  e.column_names = {"a", "b"};
  e.column_encodings = {"int", "str"};
  e.column_sizes = {8, std::nullopt};
  ASSERT_TRUE(MdsColumnsFromEntry(e, "shard.00000.mds").ok());

  ShardEntry sizes = e;
  sizes.column_sizes = {4, std::nullopt};
  EXPECT_EQ(MdsColumnsFromEntry(sizes, "shard.00000.mds").status().ToString(),
            "corrupt: shard.00000.mds: column 'a' (int) has size 4, expected 8");
  ShardEntry unsorted = e;
  unsorted.column_names = {"b", "a"};
  EXPECT_EQ(MdsColumnsFromEntry(unsorted, "shard.00000.mds").status().ToString(),
            "corrupt: shard.00000.mds: column names are not sorted: 'b' before 'a'");
  // A name no built-in encoding has is a user's own (Mosaic's users
  // register encodings): its fields are bytes, sized as the entry says.
  ShardEntry custom = e;
  custom.column_encodings = {"int", "complex128:le"};
  custom.column_sizes = {8, 16};
  auto cols = MdsColumnsFromEntry(custom, "shard.00000.mds");
  ASSERT_TRUE(cols.ok()) << cols.status().ToString();
  EXPECT_TRUE((*cols)[1].custom);
  EXPECT_EQ((*cols)[1].kind, EncodingKind::kBytes);
  EXPECT_EQ((*cols)[1].name, "complex128:le");
  EXPECT_EQ((*cols)[1].fixed_size, std::optional<uint64_t>(16));
  EXPECT_FALSE((*cols)[0].custom);
  custom.column_sizes = {8, uint64_t{1} << 32};
  EXPECT_EQ(MdsColumnsFromEntry(custom, "shard.00000.mds").status().ToString(),
            "corrupt: shard.00000.mds: column 'b': custom encoding 'complex128:le' has size "
            "4294967296, more than a sample can hold (4 GiB)");
  // A malformed built-in name stays an error.
  ShardEntry unknown = e;
  unknown.column_encodings = {"int", "ndarray:complex"};
  EXPECT_EQ(MdsColumnsFromEntry(unknown, "shard.00000.mds").status().ToString(),
            "unimplemented: shard.00000.mds: unknown MDS encoding 'ndarray:complex' for column "
            "'b': 'complex' is not an ndarray dtype");
  ShardEntry ragged = e;
  ragged.column_sizes.pop_back();
  EXPECT_EQ(MdsColumnsFromEntry(ragged, "shard.00000.mds").status().code(), StatusCode::kCorrupt);
  ShardEntry none;
  EXPECT_EQ(MdsColumnsFromEntry(none, "x").status().code(), StatusCode::kCorrupt);
}

// Random truncations and byte changes of a real shard: each read either
// succeeds or fails with kCorrupt; never a crash or an out-of-bounds read.
TEST(MdsShardReader, RandomDamageNeverCrashes) {
  auto shards = testing::LoadCompatShards("all_encodings");
  ASSERT_FALSE(shards.empty());
  const ShardEntry& e = shards[1].entry;
  auto bytes = ReadFile(JoinPath(testing::MdsDataDir("all_encodings"), e.raw_data.basename));
  ASSERT_TRUE(bytes.ok());
  auto columns = MdsColumnsFromEntry(e, "x");
  ASSERT_TRUE(columns.ok());
  std::mt19937_64 rng(42);
  std::vector<std::string_view> fields;
  size_t opened = 0, failed = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string damaged = *bytes;
    if (round % 3 == 0) {
      damaged.resize(rng() % damaged.size());
    } else {
      const int flips = 1 + static_cast<int>(rng() % 4);
      // Hit the table and sample headers often: they matter most.
      for (int k = 0; k < flips; ++k) {
        const size_t at = (rng() % 2) ? rng() % 256 : rng() % damaged.size();
        damaged[at % damaged.size()] = static_cast<char>(rng());
      }
    }
    // A copy sized exactly, so ASan catches any read past the end.
    std::unique_ptr<char[]> exact(new char[damaged.size() + 1]);
    std::memcpy(exact.get(), damaged.data(), damaged.size());
    std::string_view view(exact.get(), damaged.size());
    auto r = MdsShardReader::Open(view, "d", *columns);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().ToString();
      ++failed;
      continue;
    }
    ++opened;
    for (uint32_t i = 0; i < r->num_samples(); ++i) {
      Status st = r->ReadSample(i, &fields);
      if (!st.ok()) {
        EXPECT_EQ(st.code(), StatusCode::kCorrupt);
        continue;
      }
      for (size_t c = 0; c < fields.size(); ++c) {
        EXPECT_GE(fields[c].data(), view.data());
        EXPECT_LE(fields[c].data() + fields[c].size(), view.data() + view.size());
      }
    }
  }
  EXPECT_GT(opened, 100u);
  EXPECT_GT(failed, 100u);
}

}  // namespace
}  // namespace sluice

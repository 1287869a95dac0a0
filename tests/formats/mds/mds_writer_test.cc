// MdsWriter: the sample layout it writes and the errors it gives.
#include "formats/mds/mds_writer.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/mds/column_decoder.h"
#include "formats/mds/mds_shard_reader.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

TEST(MdsWriter, SortsColumnsAndWritesHeaderThenPayloads) {
  testing::TempDir tmp;
  auto w = MdsWriter::Create(tmp.path(), {{"z", "str"}, {"a", "int"}, {"m", "bytes"}}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ((*w)->columns().size(), 3u);
  EXPECT_EQ((*w)->columns()[0].column, "a");
  EXPECT_EQ((*w)->columns()[1].column, "m");
  EXPECT_EQ((*w)->columns()[2].column, "z");
  ASSERT_TRUE((*w)->Write({int64_t{5}, MdsBytes{"xy"}, MdsText{"hello"}}).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto shard = ReadFile(JoinPath(tmp.path(), "shard.00000.mds"));
  ASSERT_TRUE(shard.ok());
  const std::string config =
      "{\"column_encodings\": [\"int\", \"bytes\", \"str\"], \"column_names\": [\"a\", \"m\", "
      "\"z\"], \"column_sizes\": [8, null, null], \"compression\": null, \"format\": \"mds\", "
      "\"hashes\": [], \"size_limit\": 67108864, \"version\": 2}";
  std::string want;
  AppendLE<uint32_t>(want, 1);
  AppendLE<uint32_t>(want, static_cast<uint32_t>(12 + config.size()));
  AppendLE<uint32_t>(want, static_cast<uint32_t>(12 + config.size() + 23));
  want += config;
  AppendLE<uint32_t>(want, 2);  // m
  AppendLE<uint32_t>(want, 5);  // z
  AppendLE<int64_t>(want, 5);
  want += "xyhello";
  EXPECT_EQ(HexEncode(*shard), HexEncode(want));
  EXPECT_EQ((*w)->core().shards().size(), 1u);
  EXPECT_EQ((*w)->core().samples_written(), 1u);
}

TEST(MdsWriter, BadColumns) {
  testing::TempDir tmp;
  auto none = MdsWriter::Create(tmp.path(), {}, {});
  EXPECT_EQ(none.status().ToString(), "invalid argument: an MDS dataset needs at least one column");
  auto twice = MdsWriter::Create(tmp.path(), {{"a", "int"}, {"a", "str"}}, {});
  EXPECT_EQ(twice.status().ToString(), "invalid argument: column 'a' is given twice");
  auto unknown = MdsWriter::Create(tmp.path(), {{"a", "int"}, {"b", "float128"}}, {});
  EXPECT_EQ(unknown.status().ToString(), "unimplemented: unknown MDS encoding 'float128' for column 'b'");
  auto builtin = MdsWriter::Create(tmp.path(), {{"a", "int"}}, {}, {{"int", std::nullopt}});
  EXPECT_EQ(builtin.status().ToString(), "invalid argument: column 'a': 'int' cannot name a custom "
                                         "encoding (empty, or a built-in one)");
  ShardedWriterOptions big;
  big.size_limit = uint64_t{1} << 32;
  EXPECT_EQ(MdsWriter::Create(tmp.path(), {{"a", "int"}}, big).status().code(),
            StatusCode::kInvalidArgument);
}

// A user's own encodings (Mosaic lets users register them): fields stored
// as given, sized as declared, named in index.json with their size.
TEST(MdsWriter, CustomEncodings) {
  testing::TempDir tmp;
  auto w = MdsWriter::Create(tmp.path(), {{"v", "mine"}, {"f", "mine16:le"}}, {},
                             {{"mine", std::nullopt}, {"mine16:le", 2}});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WriteFields({"ab", "xyz"}).ok());
  EXPECT_EQ((*w)->WriteFields({"a", "x"}).ToString(),
            "invalid argument: column 'f' (mine16:le): value is 1 bytes, the column stores "
            "exactly 2");
  ASSERT_TRUE((*w)->Finish().ok());
  const ShardEntry& e = (*w)->core().shards()[0];
  EXPECT_EQ(e.column_encodings, (std::vector<std::string>{"mine16:le", "mine"}));
  EXPECT_EQ(e.column_sizes, (std::vector<std::optional<uint64_t>>{2, std::nullopt}));
  // n, offsets, the config, then the sample: v's u32 size, f's 2 bytes,
  // v's 3 bytes.
  auto shard = ReadFile(JoinPath(tmp.path(), "shard.00000.mds"));
  ASSERT_TRUE(shard.ok());
  const std::string config =
      "{\"column_encodings\": [\"mine16:le\", \"mine\"], \"column_names\": [\"f\", \"v\"], "
      "\"column_sizes\": [2, null], \"compression\": null, \"format\": \"mds\", \"hashes\": [], "
      "\"size_limit\": 67108864, \"version\": 2}";
  ASSERT_EQ(config.size(), 200u - 12u);
  EXPECT_EQ(HexEncode(*shard), "01000000" "c8000000" "d1000000" + HexEncode(config) +
                                   "03000000" "6162" "78797a");
}

TEST(MdsWriter, BadValues) {
  testing::TempDir tmp;
  auto w = MdsWriter::Create(tmp.path(), {{"a", "int8"}, {"b", "ndarray:uint8:2"}}, {});
  ASSERT_TRUE(w.ok());
  MdsNdArray nd{NdDtype::kUInt8, {2}, "ab"};
  EXPECT_EQ((*w)->Write({int64_t{128}, nd}).ToString(),
            "invalid argument: column 'a' (int8): value 128 is out of range for int8");
  EXPECT_EQ((*w)->Write({MdsBytes{"ab"}, nd}).ToString(),
            "invalid argument: column 'a' (int8): value is 2 bytes, the column stores exactly 1");
  EXPECT_EQ((*w)->Write({int64_t{1}}).ToString(),
            "invalid argument: sample has 1 values, the dataset has 2 columns");
  EXPECT_EQ((*w)->Write({int64_t{1}, 2.5}).ToString(),
            "invalid argument: column 'b' (ndarray:uint8:2): cannot store a float");
  EXPECT_EQ((*w)->Write({int64_t{1}, MdsJson{nullptr}}).code(), StatusCode::kInvalidArgument);
  // Failed samples were not written; a good one still is.
  ASSERT_TRUE((*w)->Write({int64_t{-1}, nd}).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->core().shards()[0].samples, 1u);
  EXPECT_EQ((*w)->Write({int64_t{1}, nd}).code(), StatusCode::kInvalidArgument);
}

// A Python bytes value is stored as is even in a pkl/json/int column.
TEST(MdsWriter, BytesPassthroughWhateverTheEncoding) {
  testing::TempDir tmp;
  auto w = MdsWriter::Create(tmp.path(), {{"i", "int"}, {"j", "json"}, {"p", "pkl"}}, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write({MdsBytes{"12345678"}, MdsBytes{"not json"}, MdsBytes{"raw"}}).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto shard = ReadFile(JoinPath(tmp.path(), "shard.00000.mds"));
  ASSERT_TRUE(shard.ok());
  std::vector<ColumnEncoding> cols = (*w)->columns();
  auto r = MdsShardReader::Open(*shard, "s", cols);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string_view> f;
  ASSERT_TRUE(r->ReadSample(0, &f).ok());
  EXPECT_EQ(f[0], "12345678");
  EXPECT_EQ(f[1], "not json");
  EXPECT_EQ(f[2], "raw");
}

}  // namespace
}  // namespace sluice

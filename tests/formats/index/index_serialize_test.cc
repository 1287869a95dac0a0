// Serializing entries built by writers (not read from a file): the column
// views, the empty index, and entries that cannot be written.
#include <string>

#include <gtest/gtest.h>

#include "formats/index/index.h"

namespace sluice {
namespace {

ShardEntry JsonEntry() {
  ShardEntry e;
  e.format = "json";
  e.newline = "\n";
  e.size_limit = 2048;
  e.samples = 2;
  e.raw_data = {"shard.00000.json", 30, {}};
  e.raw_meta = FileInfo{"shard.00000.json.meta", 180, {{"xxh64", "00ff"}, {"md5", "aa"}}};
  e.has_meta = true;
  return e;
}

TEST(IndexSerialize, EmptyIndex) {
  EXPECT_EQ(*SerializeIndexSorted(Index{}), R"({"shards": [], "version": 2})");
  EXPECT_EQ(*SerializeIndexMerged(Index{}), R"({"version": 2, "shards": []})");
}

// Expected text: CPython json.dumps(entry, sort_keys=True).
TEST(IndexSerialize, JsonEntryFromColumnLists) {
  ShardEntry e = JsonEntry();
  e.column_names = {"id", "name"};
  e.column_encodings = {"int", "str"};
  EXPECT_EQ(*SerializeShardEntry(e),
            R"({"columns": {"id": "int", "name": "str"}, "compression": null, "format": "json", )"
            R"("hashes": [], "newline": "\n", "raw_data": {"basename": "shard.00000.json", "bytes": 30, )"
            R"("hashes": {}}, "raw_meta": {"basename": "shard.00000.json.meta", "bytes": 180, )"
            R"("hashes": {"md5": "aa", "xxh64": "00ff"}}, "samples": 2, "size_limit": 2048, )"
            R"("version": 2, "zip_data": null, "zip_meta": null})");
}

TEST(IndexSerialize, JsonColumnsAreSortedByName) {
  ShardEntry e = JsonEntry();
  e.columns = {{"z", "str"}, {"a", "int"}};
  EXPECT_EQ(*SerializeShardConfig(e),
            R"({"columns": {"a": "int", "z": "str"}, "compression": null, "format": "json", )"
            R"("hashes": [], "newline": "\n", "size_limit": 2048, "version": 2})");
}

TEST(IndexSerialize, MdsConfigWithCompressionAndHashes) {
  ShardEntry e;
  e.format = "mds";
  e.column_names = {"a", "b"};
  e.column_encodings = {"int", "ndarray:uint8:5"};
  e.column_sizes = {8, 5};
  e.compression = "zstd:19";
  e.hashes = {"sha1", "xxh3_64"};
  EXPECT_EQ(*SerializeShardConfig(e),
            R"({"column_encodings": ["int", "ndarray:uint8:5"], "column_names": ["a", "b"], )"
            R"("column_sizes": [8, 5], "compression": "zstd:19", "format": "mds", )"
            R"("hashes": ["sha1", "xxh3_64"], "size_limit": null, "version": 2})");
}

TEST(IndexSerialize, RejectsUnknownFormat) {
  ShardEntry e;
  e.format = "parquet";
  Status st = SerializeShardConfig(e).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "shard entry (format 'parquet'): unknown format");
}

TEST(IndexSerialize, RejectsMismatchedMdsColumns) {
  ShardEntry e;
  e.format = "mds";
  e.column_names = {"a", "b"};
  e.column_encodings = {"int", "str"};
  e.column_sizes = {8};
  EXPECT_EQ(SerializeShardConfig(e).status().message(),
            "shard entry (format 'mds'): column_sizes and column_names differ in length");
  e.column_encodings = {"int"};
  EXPECT_EQ(SerializeShardConfig(e).status().message(),
            "shard entry (format 'mds'): column_names and column_encodings differ in length");
}

TEST(IndexSerialize, RejectsSplitEntryWithoutNewline) {
  ShardEntry e = JsonEntry();
  e.newline.reset();
  EXPECT_EQ(SerializeShardConfig(e).status().message(), "shard entry (format 'json'): missing newline");
}

TEST(IndexSerialize, RejectsXsvWithoutSeparator) {
  ShardEntry e = JsonEntry();
  e.format = "xsv";
  EXPECT_EQ(SerializeShardConfig(e).status().message(), "shard entry (format 'xsv'): missing separator");
}

TEST(IndexSerialize, RejectsSplitEntryWithoutRawMeta) {
  ShardEntry e = JsonEntry();
  e.raw_meta.reset();
  EXPECT_EQ(SerializeShardEntry(e).status().message(), "shard entry (format 'json'): missing raw_meta");
  Index index;
  index.shards = {JsonEntry(), e};
  Status st = SerializeIndexSorted(index).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "shard 1: shard entry (format 'json'): missing raw_meta");
}

TEST(IndexSerialize, RejectsInvalidUtf8) {
  ShardEntry e = JsonEntry();
  e.raw_data.basename = "shard\xff";
  EXPECT_EQ(SerializeShardEntry(e).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice

// ShardItems: the cache entries of a stream's shards, computed for the
// common layouts and listed for a mix, with the same numbers either way.
#include "engine/dataset/shard_items.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {
namespace {

ShardEntry MdsShard(const std::string& name) {
  ShardEntry e;
  e.format = "mds";
  e.column_names = {"x"};
  e.column_encodings = {"bytes"};
  e.column_sizes = {std::nullopt};
  e.samples = 3;
  e.raw_data = {name, 100, {}};
  return e;
}

ShardEntry JsonShard(const std::string& name) {
  ShardEntry e;
  e.format = "json";
  e.columns = {{"id", "int"}};
  e.newline = "\n";
  e.samples = 3;
  e.raw_data = {name, 100, {}};
  e.raw_meta = FileInfo{name + ".meta", 40, {}};
  return e;
}

// Row group `g` of `file`, read in place (no piece) or cut as a piece.
ShardEntry ParquetGroup(const std::string& file, uint32_t g, bool piece) {
  ShardEntry e;
  e.format = "parquet";
  e.column_names = {"id"};
  e.column_encodings = {"int64"};
  e.column_sizes = {8};
  e.samples = 10;
  e.raw_data = {file, 4096, {}};
  e.row_group = g;
  if (piece) {
    e.raw_data = {".parquet_row_groups/" + file + "@" + std::to_string(g), 500, {}};
    e.piece = ShardEntry::FilePiece{file, 4096, 4 + 500 * g, 500, 64, ""};
  }
  return e;
}

ShardTable TableOf(std::vector<ShardEntry> entries) {
  Index index;
  index.shards = std::move(entries);
  auto table = ShardTable::FromIndex(index);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return std::move(table).value();
}

struct Numbers {
  std::vector<size_t> data;
  std::vector<int64_t> meta;
  std::vector<uint64_t> sources;
  bool operator==(const Numbers&) const = default;
};

Numbers NumbersOf(const ShardTable& table, const ShardItems& items) {
  Numbers n;
  for (size_t i = 0; i < table.size(); ++i) {
    n.data.push_back(items.data(i));
    n.meta.push_back(items.meta(i));
  }
  for (size_t k = 0; k < items.size(); ++k) n.sources.push_back(items.source(k));
  return n;
}

std::ostream& operator<<(std::ostream& os, const Numbers& n) {
  os << "data";
  for (size_t d : n.data) os << ' ' << d;
  os << " meta";
  for (int64_t m : n.meta) os << ' ' << m;
  os << " sources";
  for (uint64_t s : n.sources) os << ' ' << s;
  return os;
}

TEST(ShardItems, AnEntryAShardIsComputed) {
  const ShardTable table = TableOf({MdsShard("a.mds"), MdsShard("b.mds"), MdsShard("c.mds")});
  auto items = ShardItems::Of(table, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_TRUE(items->computed());
  EXPECT_EQ(items->size(), 3u);
  EXPECT_EQ(NumbersOf(table, *items), (Numbers{{0, 1, 2}, {-1, -1, -1}, {0, 2, 4}}));
}

TEST(ShardItems, ParquetPiecesAreAnEntryEach) {
  const ShardTable table = TableOf({ParquetGroup("p.parquet", 0, true),
                                    ParquetGroup("p.parquet", 1, true)});
  auto items = ShardItems::Of(table, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_TRUE(items->computed());
  EXPECT_EQ(NumbersOf(table, *items), (Numbers{{0, 1}, {-1, -1}, {0, 2}}));
}

TEST(ShardItems, DataAndMetaFilesAreComputedInPairs) {
  const ShardTable table = TableOf({JsonShard("a.json"), JsonShard("b.json")});
  auto items = ShardItems::Of(table, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_TRUE(items->computed());
  EXPECT_EQ(items->size(), 4u);
  EXPECT_EQ(NumbersOf(table, *items), (Numbers{{0, 2}, {1, 3}, {0, 1, 2, 3}}));
}

TEST(ShardItems, AMixIsListedWithTheSameNumbering) {
  // Shards without and with meta files, both ways round.
  const ShardTable plain_first =
      TableOf({MdsShard("a.mds"), JsonShard("b.json"), MdsShard("c.mds")});
  auto items = ShardItems::Of(plain_first, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_FALSE(items->computed());
  EXPECT_EQ(items->size(), 4u);
  EXPECT_EQ(NumbersOf(plain_first, *items), (Numbers{{0, 1, 3}, {-1, 2, -1}, {0, 2, 3, 4}}));

  const ShardTable meta_first =
      TableOf({JsonShard("a.json"), JsonShard("b.json"), MdsShard("c.mds"), JsonShard("d.json")});
  items = ShardItems::Of(meta_first, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_FALSE(items->computed());
  EXPECT_EQ(NumbersOf(meta_first, *items),
            (Numbers{{0, 2, 4, 5}, {1, 3, -1, 6}, {0, 1, 2, 3, 4, 6, 7}}));
}

TEST(ShardItems, RowGroupsReadInPlaceShareTheirFilesEntry) {
  const ShardTable table =
      TableOf({MdsShard("a.mds"), ParquetGroup("p.parquet", 0, false),
               ParquetGroup("p.parquet", 1, false), ParquetGroup("q.parquet", 0, false),
               ParquetGroup("p.parquet", 2, false), MdsShard("b.mds")});
  auto items = ShardItems::Of(table, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_FALSE(items->computed());
  EXPECT_EQ(items->size(), 4u);
  EXPECT_EQ(NumbersOf(table, *items),
            (Numbers{{0, 1, 1, 2, 1, 3}, {-1, -1, -1, -1, -1, -1}, {0, 2, 6, 10}}));
}

TEST(ShardItems, AnEmptyTableHasNoEntries) {
  const ShardTable table = TableOf({});
  auto items = ShardItems::Of(table, "cache/index.json");
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_EQ(items->size(), 0u);
}

TEST(ShardItems, AMetaFileTheFormatNeedsButTheShardLacksIsAnError) {
  ShardEntry lacking = JsonShard("b.json");
  lacking.raw_meta.reset();
  Index index;
  index.shards = {JsonShard("a.json"), lacking};
  auto table = ShardTable::FromIndex(index);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto items = ShardItems::Of(*table, "cache/index.json");
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().ToString(),
            "corrupt: cache/index.json: shard 'b.json' of format json has no raw_meta");
}

}  // namespace
}  // namespace sluice

// SplitShardLines: the lines a .meta file delimits, the entry's columns and
// newline, and the per-line checks both split readers rely on (exact
// errors with file, sample and byte offset). The readers' own tests run it
// on Mosaic's fixtures.
#include "formats/text/split_shard_lines.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

ShardEntry Entry(uint64_t samples, std::optional<std::string> newline) {
  ShardEntry e;
  e.format = "json";
  e.samples = samples;
  e.raw_data.basename = "shard.00000.json";
  e.columns = {{"a", "str"}, {"b", "int"}};
  e.newline = std::move(newline);
  return e;
}

TEST(SplitShardLinesTest, LinesTextAndWhere) {
  const ShardEntry entry = Entry(3, "\r\n");
  // A 3-byte header, then: an empty line; a line without the shard's
  // newline; a line holding a byte that is not UTF-8.
  const std::string data = std::string("h\r\n") + "\r\n" + "x\n" + "ok\xff" + "\r\n";
  const std::string meta = EncodeSplitMeta({3, 5, 7, 12}, "{}");
  auto lines = SplitShardLines::Declared(entry);
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  ASSERT_EQ(lines->columns().size(), 2u);
  EXPECT_EQ(lines->columns()[1].name, "b");
  EXPECT_EQ(lines->columns()[1].encoding, TextEncoding::kInt);
  EXPECT_EQ(lines->newline(), "\r\n");
  ASSERT_TRUE(lines->Attach(entry, data, meta, /*first_offset=*/3).ok());
  EXPECT_EQ(lines->size(), 3u);
  EXPECT_EQ(lines->offset(2), 7u);
  EXPECT_EQ(*lines->Line(0), "\r\n");
  EXPECT_EQ(*lines->Text(0), "");
  EXPECT_EQ(lines->Text(1).status().message(),
            "shard.00000.json: sample 1 at byte 5: line does not end with the shard's newline");
  EXPECT_EQ(lines->Text(2).status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(lines->Text(2).status().message(),
            "shard.00000.json: sample 2 at byte 9: invalid UTF-8");
  EXPECT_EQ(lines->Line(3).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(lines->Line(3).status().message(),
            "shard.00000.json: sample 3 out of range (shard has 3)");
}

TEST(SplitShardLinesTest, EmptyNewlineAndBadMetaNameTheFiles) {
  EXPECT_EQ(SplitShardLines::Declared(Entry(0, "")).status().message(),
            "shard.00000.json: empty newline in index entry");
  ShardEntry entry = Entry(1, std::nullopt);
  auto lines = SplitShardLines::Declared(entry);
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(lines->newline(), "\n");
  Status wrong_count = lines->Attach(entry, "a\n", EncodeSplitMeta({0, 1, 2}, "{}"), 0);
  EXPECT_EQ(wrong_count.code(), StatusCode::kCorrupt);
  EXPECT_NE(wrong_count.message().find("shard.00000.json.meta"), std::string::npos)
      << wrong_count.message();
}

}  // namespace
}  // namespace sluice

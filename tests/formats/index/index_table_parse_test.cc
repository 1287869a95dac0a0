// ShardTable::FromIndexJson's fast path (simdjson On-Demand, straight into
// the table) against the checking parser (ParseIndexEntries feeding a
// Builder): the same table bytes on every index.json fixture, which the
// fast path takes itself; every bad input left to the checking parser, so
// errors are its own; unusual but valid inputs either taken identically
// or left to it.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/index/index.h"
#include "formats/index/index_table_parse.h"
#include "formats/index/shard_table.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> TableParseFixtures() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(SLUICE_TEST_DATA_DIR)) {
    if (e.is_regular_file() && e.path().filename() == "index.json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The checking parser's table (or error).
Result<ShardTable> CheckedTable(const std::string& text) {
  ShardTable::Builder builder;
  SLUICE_RETURN_IF_ERROR(ParseIndexEntries(text, "t/index.json", [&builder](ShardEntry e) {
    return builder.Add(std::move(e));
  }));
  return std::move(builder).Finish();
}

std::optional<ShardTable> FastTable(std::string text) {
  text.reserve(text.size() + kIndexJsonPadding);
  return ParseIndexTableFast(text, text.capacity());
}

TEST(IndexTableParse, FastPathGivesTheSameBytesOnEveryFixture) {
  const std::vector<std::string> files = TableParseFixtures();
  ASSERT_GE(files.size(), 20u);
  size_t valid = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto text = ReadFile(path);
    ASSERT_TRUE(text.ok());
    Result<ShardTable> checked = CheckedTable(*text);
    std::optional<ShardTable> fast = FastTable(*text);
    Result<ShardTable> opened = ShardTable::FromIndexJson(*text, "t/index.json");
    if (!checked.ok()) {
      EXPECT_FALSE(fast.has_value());
      EXPECT_EQ(opened.status().ToString(), checked.status().ToString());
      continue;
    }
    ++valid;
    ASSERT_TRUE(fast.has_value()) << "the fast path left a fixture to the checking parser";
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const std::string want = checked->Serialize(42);
    EXPECT_TRUE(fast->Serialize(42) == want);
    EXPECT_TRUE(opened->Serialize(42) == want);
  }
  EXPECT_GE(valid, 20u);
}

// One valid MDS entry, hashed; tests replace one piece of it.
const std::string kTableEntry =
    R"({"column_encodings": ["int", "str"], "column_names": ["id", "name"], )"
    R"("column_sizes": [8, null], "compression": "zstd", "format": "mds", "hashes": ["sha1"], )"
    R"("raw_data": {"basename": "shard.00000.mds", "bytes": 100, "hashes": {"sha1": "ab", "md5": "cd"}}, )"
    R"("samples": 3, "size_limit": 65536, "version": 2, )"
    R"("zip_data": {"basename": "shard.00000.mds.zstd", "bytes": 40, "hashes": {}}})";

std::string TableIndexWith(const std::string& entry) {
  return R"({"shards": [)" + kTableEntry + ", " + entry + R"(], "version": 2})";
}

std::string Swap(std::string text, std::string_view from, std::string_view to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

TEST(IndexTableParse, FastPathTakesAValidIndex) {
  const std::string text = TableIndexWith(kTableEntry);
  std::optional<ShardTable> fast = FastTable(text);
  ASSERT_TRUE(fast.has_value());
  Result<ShardTable> checked = CheckedTable(text);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_TRUE(fast->Serialize(1) == checked->Serialize(1));
  EXPECT_EQ(fast->entry(1).raw_data.hashes,
            (std::map<std::string, std::string>{{"md5", "cd"}, {"sha1", "ab"}}));
}

// Inputs the checking parser refuses: the fast path takes none, and
// FromIndexJson's error is the checking parser's, to the letter.
TEST(IndexTableParse, BadInputsAreLeftToTheCheckingParser) {
  const std::string good = TableIndexWith(kTableEntry);
  const std::vector<std::string> bad = {
      "",
      "[]",
      R"({"shards": [}, "version": 2})",
      good.substr(0, 150),
      good + " x",
      good + "}",
      Swap(good, R"("version": 2})", R"("version": 3})"),
      Swap(good, R"("version": 2})", R"("version": 2, "version": 2})"),
      R"({"version": 2})",
      R"({"shards": {}, "version": 2})",
      TableIndexWith("42"),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": NaN")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3.0")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": -3")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 4294967297")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 99999999999999999999999")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"samples\": 3")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3, ", "")),
      TableIndexWith(Swap(kTableEntry, "\"bytes\": 100", "\"bytes\": 4294967296")),
      TableIndexWith(Swap(kTableEntry, "\"bytes\": 40", "\"bytes\": 281474976710657")),
      TableIndexWith(Swap(kTableEntry, "\"bytes\": 40", "\"bytes\": 18446744073709551616")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 03")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": \"3\"")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3x")),
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "../x.mds\"")),
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "a\\\\b\"")),
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "a\\u0000b\"")),
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "a\\qb\"")),
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "a\x01" "b\"")),
      TableIndexWith(Swap(kTableEntry, "\"md5\": \"cd\"", "\"sha1\": \"cd\"")),
      TableIndexWith(Swap(kTableEntry, "\"md5\": \"cd\"", "\"md5\": 5")),
      TableIndexWith(Swap(kTableEntry, "[\"id\", \"name\"]", "[\"id\", \"id\"]")),
      TableIndexWith(Swap(kTableEntry, "[\"id\", \"name\"]", "[\"id\"]")),
      TableIndexWith(Swap(kTableEntry, "[8, null]", "[8]")),
      TableIndexWith(Swap(kTableEntry, "[8, null]", "[8, nul]")),
      TableIndexWith(Swap(kTableEntry, "[8, null]", "[8, 1e3]")),
      TableIndexWith(Swap(kTableEntry, "\"compression\": \"zstd\"", "\"compression\": null")),
      TableIndexWith(Swap(kTableEntry, "\"format\": \"mds\"", "\"format\": \"parquet\"")),
      TableIndexWith(Swap(kTableEntry, "\"version\": 2", "\"version\": 1")),
      TableIndexWith(Swap(kTableEntry, "\"hashes\": [\"sha1\"]", "\"hashes\": [\"sha1\", 1]")),
      TableIndexWith(Swap(kTableEntry, "\"size_limit\": 65536", "\"size_limit\": true")),
      // Invalid JSON where nothing reads it: in a key Sluice ignores.
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"extra\": [1, tru]")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"extra\": \"\\x\"")),
      // An escaped key that spells a known one, beside it: a duplicate.
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"sam\\u0070les\": 3")),
      // A split format without its meta file.
      TableIndexWith(R"({"columns": {"id": "int"}, "compression": null, "format": "json", )"
                     R"("hashes": [], "newline": "\n", "raw_data": {"basename": "a.json", )"
                     R"("bytes": 10, "hashes": {}}, "samples": 1, "size_limit": null, )"
                     R"("version": 2, "zip_data": null, "zip_meta": null})"),
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "input " << i << ": " << bad[i].substr(0, 400));
    Result<Index> checked = ParseIndex(bad[i], "t/index.json");
    ASSERT_FALSE(checked.ok());
    EXPECT_FALSE(FastTable(bad[i]).has_value());
    Result<ShardTable> opened = ShardTable::FromIndexJson(bad[i], "t/index.json");
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().ToString(), checked.status().ToString());
  }
}

// Valid inputs outside the common case: the same table either way (the
// fast path takes some, e.g. escapes in values, and leaves others, e.g.
// keys Sluice ignores).
TEST(IndexTableParse, UnusualValidInputsGiveTheSameTable) {
  const std::vector<std::string> inputs = {
      TableIndexWith(Swap(kTableEntry, "shard.00000.mds\"", "sh\\u0061rd\\/x.mds\"")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"extra\": [1, {\"a\": null}]")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"sam\\u0070les\": 3")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 3, \"newline\": 5")),
      TableIndexWith(Swap(kTableEntry, "\"format\": \"mds\"", "\"format\": \"mds\", \"columns\": {\"z\": \"int\"}")),
      Swap(TableIndexWith(kTableEntry), "\"version\": 2}", "\"extra\": {}, \"version\": 2}"),
      R"({"version": 2, "shards": [)" + kTableEntry + "]}",
      R"({"shards": [], "version": 2})",
      "  " + TableIndexWith(kTableEntry) + " \n",
      // Numbers: the fast path reads digits alone and leaves "-0" to the
      // checking parser; the largest size it allows; space after a number.
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": -0")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3", "\"samples\": 0")),
      TableIndexWith(Swap(kTableEntry, "\"bytes\": 40", "\"bytes\": 281474976710656")),
      TableIndexWith(Swap(kTableEntry, "\"samples\": 3, ", "\"samples\": 3 \n\t, ")),
      // Keys out of the sorted order writers use.
      TableIndexWith(Swap(Swap(kTableEntry, "\"column_encodings\": [\"int\", \"str\"], ", ""),
                          "\"version\": 2, ", "\"version\": 2, \"column_encodings\": [\"int\", \"str\"], ")),
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "input " << i << ": " << inputs[i].substr(0, 400));
    Result<ShardTable> checked = CheckedTable(inputs[i]);
    ASSERT_TRUE(checked.ok()) << checked.status().ToString();
    Result<ShardTable> opened = ShardTable::FromIndexJson(inputs[i], "t/index.json");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_TRUE(opened->Serialize(5) == checked->Serialize(5));
    std::optional<ShardTable> fast = FastTable(inputs[i]);
    if (fast) {
      EXPECT_TRUE(fast->Serialize(5) == checked->Serialize(5));
    }
  }
  // The common unusual cases are still fast: escapes in a value, numbers
  // of every size allowed, keys in any order.
  EXPECT_TRUE(FastTable(inputs[0]).has_value());
  for (size_t i = inputs.size() - 4; i < inputs.size(); ++i) {
    EXPECT_TRUE(FastTable(inputs[i]).has_value()) << "input " << i;
  }
}

}  // namespace
}  // namespace sluice

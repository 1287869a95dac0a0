// ShardTable keeps every field of every entry (Mosaic's fixtures and
// hand-built Parquet pieces), its binary form round-trips, and a damaged,
// truncated or stale binary form is refused, never read.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"
#include "formats/index/shard_table_layout.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
namespace layout = shard_table_layout;

std::vector<std::string> ShardTableFixtureIndexes() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(SLUICE_TEST_DATA_DIR)) {
    if (e.is_regular_file() && e.path().filename() == "index.json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectSameTableFile(const std::optional<FileInfo>& a, const std::optional<FileInfo>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->basename, b->basename);
  EXPECT_EQ(a->bytes, b->bytes);
  EXPECT_EQ(a->hashes, b->hashes);
}

void ExpectSameEntry(const ShardEntry& a, const ShardEntry& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.column_names, b.column_names);
  EXPECT_EQ(a.column_encodings, b.column_encodings);
  EXPECT_EQ(a.column_sizes, b.column_sizes);
  EXPECT_EQ(a.columns, b.columns);
  EXPECT_EQ(a.compression, b.compression);
  EXPECT_EQ(a.hashes, b.hashes);
  EXPECT_EQ(a.newline, b.newline);
  EXPECT_EQ(a.separator, b.separator);
  EXPECT_EQ(a.size_limit, b.size_limit);
  EXPECT_EQ(a.samples, b.samples);
  ExpectSameTableFile(a.raw_data, b.raw_data);
  ExpectSameTableFile(a.zip_data, b.zip_data);
  ExpectSameTableFile(a.raw_meta, b.raw_meta);
  ExpectSameTableFile(a.zip_meta, b.zip_meta);
  EXPECT_EQ(a.has_meta, b.has_meta);
  EXPECT_EQ(a.row_group, b.row_group);
  ASSERT_EQ(a.piece.has_value(), b.piece.has_value());
  if (a.piece) {
    EXPECT_EQ(a.piece->file, b.piece->file);
    EXPECT_EQ(a.piece->file_bytes, b.piece->file_bytes);
    EXPECT_EQ(a.piece->offset, b.piece->offset);
    EXPECT_EQ(a.piece->length, b.piece->length);
    EXPECT_EQ(a.piece->tail_bytes, b.piece->tail_bytes);
    EXPECT_EQ(a.piece->etag, b.piece->etag);
  }
}

// The views of ref(i) say what entry(i) says.
void ExpectRefMatches(const ShardTable& t, size_t i, const ShardEntry& e) {
  ShardRef r = t.ref(i);
  EXPECT_EQ(r.format(), e.format);
  EXPECT_EQ(r.compression(), e.compression);
  EXPECT_EQ(r.samples, e.samples);
  EXPECT_EQ(t.samples(i), e.samples);
  EXPECT_EQ(r.raw_data.basename, e.raw_data.basename);
  EXPECT_EQ(r.raw_data.bytes, e.raw_data.bytes);
  for (auto [ref, info] : {std::pair{&r.zip_data, &e.zip_data}, std::pair{&r.raw_meta, &e.raw_meta},
                           std::pair{&r.zip_meta, &e.zip_meta}}) {
    ASSERT_EQ(ref->has_value(), info->has_value());
    if (*ref) {
      EXPECT_EQ((*ref)->basename, (*info)->basename);
      EXPECT_EQ((*ref)->bytes, (*info)->bytes);
    }
  }
  EXPECT_EQ(r.has_meta, e.has_meta);
  EXPECT_EQ(r.row_group, e.row_group);
  ASSERT_EQ(r.piece.has_value(), e.piece.has_value());
  if (r.piece) {
    EXPECT_EQ(r.piece->file, e.piece->file);
    EXPECT_EQ(r.piece->offset, e.piece->offset);
    EXPECT_EQ(r.piece->length, e.piece->length);
    EXPECT_EQ(r.piece->tail_bytes, e.piece->tail_bytes);
    EXPECT_EQ(r.piece->file_bytes, e.piece->file_bytes);
    EXPECT_EQ(r.piece->etag, e.piece->etag);
  }
}

// Two row groups of one Parquet file as pieces, a third read in place, and
// an MDS entry with hashes on both files: the fields no fixture has.
Index HandBuiltIndex() {
  Index index;
  for (uint32_t g = 0; g < 3; ++g) {
    ShardEntry e;
    e.format = "parquet";
    e.column_names = {"id", "text"};
    e.column_encodings = {"int64", "str"};
    e.column_sizes = {8, std::nullopt};
    e.samples = 100 + g;
    e.raw_data = {"part-0.parquet", 4096 + g, {}};
    e.row_group = g;
    if (g < 2) {
      e.raw_data = {".parquet_row_groups/part-0.parquet@" + std::to_string(g), 1000 + g, {}};
      e.piece = ShardEntry::FilePiece{"data/part-0.parquet", 9000, 4 + 500 * g, 500, 64, ""};
    }
    index.shards.push_back(std::move(e));
  }
  ShardEntry m;
  m.format = "mds";
  m.column_names = {"x"};
  m.column_encodings = {"bytes"};
  m.column_sizes = {std::nullopt};
  m.compression = "zstd:7";
  m.hashes = {"sha1", "xxh64"};
  m.size_limit = 1 << 20;
  m.samples = 7;
  m.raw_data = {"shard.00000.mds", 777, {{"sha1", "aa"}, {"xxh64", "bb"}}};
  m.zip_data = FileInfo{"shard.00000.mds.zstd", 333, {{"sha1", "cc"}}};
  index.shards.push_back(std::move(m));
  return index;
}

TEST(ShardTable, KeepsEveryFieldOfEveryFixture) {
  const std::vector<std::string> files = ShardTableFixtureIndexes();
  ASSERT_GE(files.size(), 20u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto text = ReadFile(path);
    ASSERT_TRUE(text.ok());
    auto index = ParseIndex(*text, path);
    if (!index.ok()) continue;  // the bad-input fixtures
    auto table = ShardTable::FromIndex(*index);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ(table->size(), index->shards.size());
    for (size_t i = 0; i < table->size(); ++i) {
      ExpectSameEntry(table->entry(i), index->shards[i]);
      ExpectRefMatches(*table, i, index->shards[i]);
    }
    // Round trip through the binary form.
    std::string bytes = table->Serialize(42);
    auto mapped = ShardTable::FromBytes(nullptr, bytes, 42, "t.bin");
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    ASSERT_EQ(mapped->size(), index->shards.size());
    for (size_t i = 0; i < mapped->size(); ++i) ExpectSameEntry(mapped->entry(i), index->shards[i]);
  }
}

TEST(ShardTable, SharesOneConfigurationAmongLikeShards) {
  Index index = HandBuiltIndex();
  auto table = ShardTable::FromIndex(index);
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->num_configs(), 2u);  // the Parquet one, the MDS one
  EXPECT_EQ(table->config_id(0), table->config_id(2));
  EXPECT_NE(table->config_id(0), table->config_id(3));
  EXPECT_EQ(table->config(3).hashes, (std::vector<std::string>{"sha1", "xxh64"}));
  EXPECT_EQ(table->config(3).samples, 0u);  // configurations carry no per-shard fields
  EXPECT_TRUE(table->config(3).raw_data.basename.empty());
  for (size_t i = 0; i < index.shards.size(); ++i) {
    ExpectSameEntry(table->entry(i), index.shards[i]);
    ExpectRefMatches(*table, i, index.shards[i]);
  }
}

// A shard added with the last Add's configuration (AddWithLastConfig, no
// configuration compared) is the table's shard as Add makes it, to the
// byte; before any Add it is refused.
TEST(ShardTable, AShardAddedWithTheLastConfigurationIsTheShardAddMakes) {
  Index index = HandBuiltIndex();
  auto whole = ShardTable::FromIndex(index);
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->config_id(0), whole->config_id(2));
  std::vector<std::pair<std::string_view, std::string_view>> hashes;
  const ShardEntry& e = index.shards[2];
  for (const auto& [algorithm, hex] : e.raw_data.hashes) hashes.emplace_back(algorithm, hex);
  ShardParts parts;
  parts.samples = e.samples;
  parts.raw_data = FileParts{e.raw_data.basename, e.raw_data.bytes, hashes};
  ASSERT_FALSE(e.zip_data || e.raw_meta || e.zip_meta);
  parts.has_meta = e.has_meta;
  parts.row_group = e.row_group;
  if (e.piece) parts.piece = &*e.piece;

  ShardTable::Builder first;
  const Status refused = first.AddWithLastConfig(parts);
  EXPECT_EQ(refused.ToString(),
            InternalError("a shard added with the last configuration before any").ToString());

  // The MDS configuration first (number 0), then the Parquet one (1).
  ShardTable::Builder builder;
  ASSERT_TRUE(builder.Add(index.shards[3]).ok());
  ASSERT_TRUE(builder.Add(index.shards[0]).ok());
  ASSERT_TRUE(builder.AddWithLastConfig(parts).ok());
  ShardTable built = std::move(builder).Finish();
  Index expected;
  expected.shards = {index.shards[3], index.shards[0], index.shards[2]};
  auto want = ShardTable::FromIndex(expected);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(built.num_configs(), 2u);
  EXPECT_EQ(built.config_id(2), 1u);
  EXPECT_TRUE(built.Serialize(7) == want->Serialize(7));
  for (size_t i = 0; i < expected.shards.size(); ++i) {
    ExpectSameEntry(built.entry(i), expected.shards[i]);
  }
}

TEST(ShardTable, BinaryFormRoundTripsAndKeepsItsOwnerAlive) {
  auto table = ShardTable::FromIndex(HandBuiltIndex());
  ASSERT_TRUE(table.ok());
  auto bytes = std::make_shared<std::string>(table->Serialize(7));
  auto mapped = ShardTable::FromBytes(bytes, *bytes, 7, "t.bin");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  std::string_view before = mapped->ref(3).raw_data.basename;
  bytes.reset();  // the table holds the bytes
  ShardTable moved = std::move(*mapped);
  EXPECT_EQ(moved.ref(3).raw_data.basename, before);
  Index expected = HandBuiltIndex();
  for (size_t i = 0; i < expected.shards.size(); ++i) {
    ExpectSameEntry(moved.entry(i), expected.shards[i]);
    ExpectRefMatches(moved, i, expected.shards[i]);
  }
  // Unaligned bytes are read from an aligned copy.
  std::string shifted = " " + moved.Serialize(7);
  auto unaligned = ShardTable::FromBytes(nullptr, std::string_view(shifted).substr(1), 7, "u.bin");
  ASSERT_TRUE(unaligned.ok()) << unaligned.status().ToString();
  ExpectSameEntry(unaligned->entry(3), expected.shards[3]);
}

// Rewrites the checksum after a deliberate change, so the structural
// checks, not the checksum, must catch it.
void ResealTable(std::string* bytes) {
  layout::FileHeader h;
  std::memcpy(&h, bytes->data(), sizeof(h));
  h.head.checksum = XXH3_64bits(bytes->data() + sizeof(h), bytes->size() - sizeof(h));
  std::memcpy(bytes->data(), &h, sizeof(h));
}

Status ReadTableBytes(const std::string& bytes) {
  return ShardTable::FromBytes(nullptr, bytes, 7, "x/index.bin").status();
}

// tests/data/binary_files/index.bin was written by the code before
// base/binary_file.h (main at c9be08a) from HandBuiltIndex() with key 7: the
// layout on disk is unchanged, read and written to the byte.
TEST(ShardTable, ABinaryIndexWrittenBeforeTheSharedHeaderReadsAndWritesTheSameBytes) {
  const std::string old = *ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/binary_files/index.bin");
  ASSERT_EQ(old.size(), 790u);
  auto table = ShardTable::FromIndex(HandBuiltIndex());
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->Serialize(7), old);
  auto read = ShardTable::FromBytes(nullptr, old, 7, "old");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Serialize(7), old);
}

// A piece's listed etag (after its file's name in the text, its length in
// the record's word an older layout left 0: an older file's pieces read as
// of unknown etag, above) round-trips through the binary form, known or not.
TEST(ShardTable, APiecesListedEtagRoundTripsThroughTheBinaryForm) {
  Index index = HandBuiltIndex();
  index.shards[0].piece->etag = "\"v1\"";
  index.shards[1].piece->etag = "123-456";
  auto table = ShardTable::FromIndex(index);
  ASSERT_TRUE(table.ok());
  const std::string bytes = table->Serialize(7);
  auto read = ShardTable::FromBytes(nullptr, bytes, 7, "x/index.bin");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->entry(0).piece->etag, "\"v1\"");
  EXPECT_EQ(read->ref(1).piece->etag, "123-456");
  EXPECT_EQ(read->entry(1).piece->file, "data/part-0.parquet");
  EXPECT_FALSE(read->ref(2).piece.has_value());
  auto old = ShardTable::FromIndex(HandBuiltIndex());
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->ref(0).piece->etag, "");
}

TEST(ShardTable, RefusesDamagedTruncatedOrStaleBinaryForms) {
  auto table = ShardTable::FromIndex(HandBuiltIndex());
  ASSERT_TRUE(table.ok());
  const std::string good = table->Serialize(7);
  ASSERT_TRUE(ReadTableBytes(good).ok());

  EXPECT_EQ(ShardTable::FromBytes(nullptr, good, 8, "x/index.bin").status().ToString(),
            "not found: x/index.bin: built from another index (stale)");
  EXPECT_EQ(ReadTableBytes(good.substr(0, 10)).ToString(),
            "corrupt: x/index.bin: 10 bytes, shorter than the 80-byte header of a binary index");
  EXPECT_EQ(ReadTableBytes(good.substr(0, good.size() - 1)).ToString(),
            "corrupt: x/index.bin: sections larger than the file's " +
                std::to_string(good.size() - 1) + " bytes");
  EXPECT_EQ(ReadTableBytes(good + "z").ToString(), "corrupt: x/index.bin: " +
                                             std::to_string(good.size() + 1) +
                                             " bytes where its header says " +
                                             std::to_string(good.size()));
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: not a binary index");
  bad = good;
  bad[8] = 2;  // layout version
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: a binary index of layout 2, expected 1");
  // One flipped bit anywhere after the header.
  for (size_t at = sizeof(layout::FileHeader); at < good.size(); at += 13) {
    bad = good;
    bad[at] ^= 0x10;
    EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: checksum mismatch") << at;
  }
  // A header whose counts claim more than the file holds.
  bad = good;
  layout::FileHeader h;
  std::memcpy(&h, bad.data(), sizeof(h));
  h.shard_count = uint64_t{1} << 60;
  std::memcpy(bad.data(), &h, sizeof(h));
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: sections larger than the file's " +
                                      std::to_string(good.size()) + " bytes");

  // Checksummed, but wrong inside.
  const size_t records = sizeof(layout::FileHeader);
  auto record = [&](std::string* b, size_t i) {
    return reinterpret_cast<layout::ShardRecord*>(b->data() + records) + i;
  };
  bad = good;
  record(&bad, 1)->config = 9;
  ResealTable(&bad);
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: shard 1: a record out of bounds");
  bad = good;
  record(&bad, 2)->flags |= 64;
  ResealTable(&bad);
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: shard 2: a record out of bounds");
  bad = good;
  record(&bad, 3)->first_file = 1;
  ResealTable(&bad);
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: shard 3: a record out of bounds");
  // A file name turned into "../" something.
  bad = good;
  const size_t name = bad.find(".parquet_row_groups");
  ASSERT_NE(name, std::string::npos);
  bad.replace(name, 3, "../");
  ResealTable(&bad);
  EXPECT_EQ(ReadTableBytes(bad).ToString(), "corrupt: x/index.bin: file 0: an unsafe name or malformed hashes");
}

}  // namespace
}  // namespace sluice

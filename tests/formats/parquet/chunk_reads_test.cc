// Which bytes a row group's chosen columns take (chunk_reads.h), and a row
// group read back from a piece holding only those bytes and the footer
// (ParquetShardReader::OpenPiece): the same values as the whole file.
#include "formats/parquet/chunk_reads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/file.h"
#include "formats/parquet/parquet_shard_reader.h"

namespace sluice::parquet {
namespace {

const std::string kLists = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_lists_v1.parquet";

// A footer of one row group whose fields a..e have the chunks given.
FileFooter FooterWithChunks(const std::vector<ByteRange>& chunks) {
  FileFooter f;
  f.chunk_ranges.resize(1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    Field field;
    field.name = std::string(1, static_cast<char>('a' + i));
    field.first_leaf = i;
    field.leaf_count = 1;
    f.schema.fields.push_back(field);
    f.chunk_ranges[0].push_back(chunks[i]);
  }
  return f;
}

std::vector<std::pair<uint64_t, uint64_t>> Pairs(const std::vector<ByteRange>& reads) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const ByteRange& r : reads) out.emplace_back(r.offset, r.size);
  return out;
}

TEST(ChunkReads, ChunksAtMostOneMiBApartAreOneRead) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  ASSERT_EQ(kChunkReadGapBytes, kMiB);
  // a [4, 104); b 1 MiB after a's end; c 1 MiB + 1 after b's; d inside c's
  // read; e empty.
  const FileFooter f = FooterWithChunks({{4, 100},
                                         {104 + kMiB, 10},
                                         {114 + 2 * kMiB + 1, 50},
                                         {120 + 2 * kMiB, 5},
                                         {0, 0}});
  using P = std::vector<std::pair<uint64_t, uint64_t>>;
  // The order asked does not matter: reads go by offset.
  EXPECT_EQ(Pairs(ChunkReads(f, 0, {2, 0, 1, 3, 4})),
            (P{{4, 110 + kMiB}, {114 + 2 * kMiB + 1, 50}}));
  EXPECT_EQ(Pairs(ChunkReads(f, 0, {1, 0})), (P{{4, 110 + kMiB}}));
  EXPECT_EQ(Pairs(ChunkReads(f, 0, {0, 2})), (P{{4, 100}, {114 + 2 * kMiB + 1, 50}}));
  EXPECT_EQ(Pairs(ChunkReads(f, 0, {2, 3})), (P{{114 + 2 * kMiB + 1, 50}}));
  EXPECT_EQ(Pairs(ChunkReads(f, 0, {0, 1}, 0)), (P{{4, 100}, {104 + kMiB, 10}}));
  EXPECT_TRUE(ChunkReads(f, 0, {4}).empty());
  EXPECT_EQ(BytesOfReads(ChunkReads(f, 0, {2, 0, 1, 3, 4})), 160 + kMiB);
}

// ChunkReadsInto gives ChunkReads' reads, whatever its vector held, in the
// vector's own room once it is large enough.
TEST(ChunkReads, IntoAKeptVectorAreTheSameReads) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  const FileFooter f = FooterWithChunks({{4, 100},
                                         {104 + kMiB, 10},
                                         {114 + 2 * kMiB + 1, 50},
                                         {120 + 2 * kMiB, 5},
                                         {0, 0}});
  std::vector<ByteRange> kept = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}};
  const ByteRange* room = kept.data();
  const std::vector<std::vector<size_t>> asked = {{2, 0, 1, 3, 4}, {1, 0}, {0, 2},
                                                  {2, 3},          {4},    {3, 2, 1, 0}};
  for (const std::vector<size_t>& fields : asked) {
    for (uint64_t gap : {kChunkReadGapBytes, uint64_t{0}}) {
      ChunkReadsInto(f, 0, fields, gap, &kept);
      EXPECT_EQ(Pairs(kept), Pairs(ChunkReads(f, 0, fields, gap))) << fields.size() << " " << gap;
      EXPECT_EQ(kept.data(), room);
    }
  }
}

TEST(ChunkReads, FieldsAreNamedInTheOrderAsked) {
  const FileFooter f = FooterWithChunks({{4, 1}, {5, 1}, {6, 1}});
  EXPECT_EQ(*FieldsNamed(f.schema, {}, "t.parquet"), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(*FieldsNamed(f.schema, {"c", "a"}, "t.parquet"), (std::vector<size_t>{2, 0}));
  EXPECT_EQ(FieldsNamed(f.schema, {"a", "z"}, "t.parquet").status().ToString(),
            "not found: t.parquet: no column \"z\" (its columns: a, b, c)");
  EXPECT_EQ(FieldsNamed(f.schema, {"b", "b"}, "t.parquet").status().ToString(),
            "invalid argument: t.parquet: column \"b\" is asked twice");
}

// A piece of the fixture's row group 1 holding fields 3 and 1 only: the
// values of the whole file's reader, in the order asked.
TEST(ChunkReads, PieceOfSomeColumnsReadsAsTheWholeFile) {
  Result<std::string> file = ReadFile(kLists);
  ASSERT_TRUE(file.ok());
  const std::string& bytes = *file;
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(bytes, offset, size);
    return Status::Ok();
  };
  Result<FileFooter> footer = ReadFooter(bytes.size(), read, "lists.parquet");
  ASSERT_TRUE(footer.ok());
  const std::vector<std::string> columns = {footer->schema.fields[3].name,
                                            footer->schema.fields[1].name};
  const std::vector<ByteRange> reads = ChunkReads(*footer, 1, {3, 1});
  std::string piece;
  for (const ByteRange& r : reads) piece += bytes.substr(r.offset, r.size);
  const uint64_t length = piece.size();
  const uint64_t tail = footer->metadata_length + 8;
  piece += bytes.substr(bytes.size() - tail);
  const uint64_t rows = static_cast<uint64_t>(footer->meta.row_groups[1].num_rows);

  auto whole = ParquetShardReader::Open(bytes, "lists.parquet", 1, rows);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  auto part = ParquetShardReader::OpenPiece(piece, {bytes.size(), reads[0].offset, length, tail},
                                            "lists.parquet", 1, rows, {}, columns);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->column_names(), columns);
  ASSERT_EQ(part->num_rows(), rows);
  std::vector<std::string_view> all, some;
  std::vector<MaskedField> masked_all, masked_some;
  for (uint32_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(whole->ReadRow(r, &all, &masked_all).ok());
    ASSERT_TRUE(part->ReadRow(r, &some, &masked_some).ok());
    ASSERT_EQ(some.size(), 2u);
    EXPECT_EQ(some[0], all[3]) << r;
    EXPECT_EQ(some[0].data() == nullptr, all[3].data() == nullptr) << r;
    EXPECT_EQ(some[1], all[1]) << r;
    EXPECT_EQ(some[1].data() == nullptr, all[1].data() == nullptr) << r;
  }
  // The whole file read by name: the same columns.
  auto named = ParquetShardReader::Open(bytes, "lists.parquet", 1, rows, {}, columns);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->column_names(), columns);

  // A piece of other columns' size is refused, naming the file and group.
  auto other = ParquetShardReader::OpenPiece(piece, {bytes.size(), reads[0].offset, length, tail},
                                             "lists.parquet", 1, rows, {},
                                             {footer->schema.fields[3].name});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().ToString(),
            "corrupt: lists.parquet: row group 1: the piece holds " + std::to_string(length) +
                " bytes of column chunks, its footer's reads of the columns " +
                std::to_string(BytesOfReads(ChunkReads(*footer, 1, {3}))));
}

}  // namespace
}  // namespace sluice::parquet

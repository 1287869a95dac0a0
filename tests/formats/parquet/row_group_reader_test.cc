// Reading only some fields of a row group: which byte ranges are read
// (adjacent chunks coalesced up to the gap allowed), buffers in the order
// asked, and the refusals checked before any read.
#include "formats/parquet/row_group_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/footer.h"

namespace sluice::parquet {
namespace {

const std::string kFile = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_lists_v1.parquet";

struct RowGroupFixture {
  std::string bytes;
  std::vector<std::pair<uint64_t, uint64_t>> reads;
  RangeReader reader() {
    return [this](uint64_t offset, uint64_t size, std::string* out) {
      reads.emplace_back(offset, size);
      out->assign(bytes, offset, size);
      return Status::Ok();
    };
  }
};

TEST(RowGroupReader, SomeFieldsInTheOrderAsked) {
  RowGroupFixture f{*ReadFile(kFile), {}};
  Result<FileFooter> footer = ReadFooter(f.bytes.size(), f.reader(), "lists.parquet");
  ASSERT_TRUE(footer.ok());
  const ByteRange r1 = footer->chunk_ranges[1][1];
  const ByteRange r2 = footer->chunk_ranges[1][2];
  const ByteRange r3 = footer->chunk_ranges[1][3];
  ASSERT_EQ(r1.offset + r1.size, r2.offset);  // pyarrow writes chunks back to back
  ASSERT_EQ(r2.offset + r2.size, r3.offset);

  // Within the allowed gap: one read from field 1's chunk to field 3's end.
  f.reads.clear();
  Result<std::vector<ColumnBuffer>> two = ReadRowGroup(*footer, 1, {3, 1}, f.reader(), "lists.parquet");
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(f.reads.size(), 1u);
  EXPECT_EQ(f.reads[0], std::make_pair(r1.offset, r3.offset + r3.size - r1.offset));
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].leaf.path, footer->schema.leaves[3].path);
  EXPECT_EQ((*two)[1].leaf.path, footer->schema.leaves[1].path);
  EXPECT_EQ((*two)[0].num_rows, static_cast<size_t>(footer->meta.row_groups[1].num_rows));

  // No gap allowed: exactly the two chunks.
  RowGroupReadOptions tight;
  tight.max_gap_bytes = 0;
  f.reads.clear();
  ASSERT_TRUE(ReadRowGroup(*footer, 1, {3, 1}, f.reader(), "lists.parquet", tight).ok());
  ASSERT_EQ(f.reads.size(), 2u);
  EXPECT_EQ(f.reads[0], std::make_pair(r1.offset, r1.size));
  EXPECT_EQ(f.reads[1], std::make_pair(r3.offset, r3.size));

  // Refusals come before any read.
  f.reads.clear();
  EXPECT_EQ(ReadRowGroup(*footer, 9, {}, f.reader(), "lists.parquet").status().ToString(),
            "not found: lists.parquet: no row group 9 (3 row groups)");
  EXPECT_EQ(ReadRowGroup(*footer, 0, {99}, f.reader(), "lists.parquet").status().ToString(),
            "not found: lists.parquet: no column 99 (" +
                std::to_string(footer->schema.fields.size()) + " columns)");
  EXPECT_TRUE(f.reads.empty());
}

TEST(RowGroupReader, BudgetsAreCheckedBeforeDecoding) {
  RowGroupFixture f{*ReadFile(kFile), {}};
  Result<FileFooter> footer = ReadFooter(f.bytes.size(), f.reader(), "lists.parquet");
  ASSERT_TRUE(footer.ok());
  const ColumnMetaData& ids = footer->chunk(0, 1);
  RowGroupReadOptions o;
  o.decode.max_level_entries = 10;
  EXPECT_EQ(ReadRowGroup(*footer, 0, {1}, f.reader(), "lists.parquet", o).status().ToString(),
            "out of range: lists.parquet: row group 0 column \"" + footer->schema.leaves[1].path +
                "\": " + std::to_string(ids.num_values) + " values, more than the limit of 10");
  RowGroupReadOptions bytes;
  bytes.decode.max_value_bytes = 8;
  const std::string e = ReadRowGroup(*footer, 0, {1}, f.reader(), "lists.parquet", bytes).status().ToString();
  EXPECT_NE(e.find("bytes, more than the limit of 8 bytes"), std::string::npos) << e;
}

// The reader's budget for one row group: the bytes it reads, charged before
// reading, then each buffer as it is decoded; the error names the column
// that passed it.
TEST(RowGroupReader, RowGroupBudgetNamesTheColumnThatPassesIt) {
  RowGroupFixture f{*ReadFile(kFile), {}};
  Result<FileFooter> footer = ReadFooter(f.bytes.size(), f.reader(), "lists.parquet");
  ASSERT_TRUE(footer.ok());
  const std::vector<size_t> fields = {1, 2};
  const uint64_t read = BytesOfReads(ChunkReads(*footer, 0, fields));
  Result<std::vector<ColumnBuffer>> whole = ReadRowGroup(*footer, 0, fields, f.reader(), "lists.parquet");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const uint64_t first = (*whole)[0].HeldBytes();
  const uint64_t second = (*whole)[1].HeldBytes();
  ASSERT_GT(first, 0u);
  ASSERT_GT(second, 0u);

  RowGroupReadOptions o;
  o.decode.max_row_group_bytes = read - 1;
  f.reads.clear();
  EXPECT_EQ(ReadRowGroup(*footer, 0, fields, f.reader(), "lists.parquet", o).status().ToString(),
            "out of range: lists.parquet: row group 0: the row group holds " + std::to_string(read) +
                " bytes with the bytes of its column chunks, more than the reader's budget of " +
                std::to_string(read - 1) + " bytes (max_row_group_bytes)");
  EXPECT_TRUE(f.reads.empty());  // refused before reading

  o.decode.max_row_group_bytes = read + first + second - 1;
  EXPECT_EQ(ReadRowGroup(*footer, 0, fields, f.reader(), "lists.parquet", o).status().ToString(),
            "out of range: lists.parquet: row group 0 column \"" + footer->schema.leaves[2].path +
                "\": the row group holds " + std::to_string(read + first + second) +
                " bytes with this column decoded, more than the reader's budget of " +
                std::to_string(read + first + second - 1) + " bytes (max_row_group_bytes)");
  o.decode.max_row_group_bytes = read + first + second;
  EXPECT_TRUE(ReadRowGroup(*footer, 0, fields, f.reader(), "lists.parquet", o).ok());
}

TEST(RowGroupReader, PlainValuesAreViewsIntoTheBytesRead) {
  const std::string path = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/polars_uncompressed.parquet";
  RowGroupFixture f{*ReadFile(path), {}};
  Result<FileFooter> footer = ReadFooter(f.bytes.size(), f.reader(), "p.parquet");
  ASSERT_TRUE(footer.ok());
  size_t float32 = 0, text = 0;
  for (size_t i = 0; i < footer->schema.fields.size(); ++i) {
    if (footer->schema.fields[i].name == "float32") float32 = i;
    if (footer->schema.fields[i].name == "text") text = i;
  }
  Result<std::vector<ColumnBuffer>> r = ReadRowGroup(*footer, 0, {float32, text}, f.reader(), "p.parquet");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ColumnBuffer& floats = (*r)[0];
  const std::string& read = *floats.source;
  const auto inside = [&](std::string_view v) {
    return v.data() >= read.data() && v.data() + v.size() <= read.data() + read.size();
  };
  // A PLAIN page without nulls, stored uncompressed: one run, in the bytes read.
  ASSERT_EQ(floats.fixed_runs.size(), 1u);
  EXPECT_TRUE(inside(floats.fixed_runs[0].bytes));
  EXPECT_EQ(floats.fixed_runs[0].bytes.size(), floats.leaf_slots() * 4);
  EXPECT_EQ(floats.fixed_value(3).data(), floats.fixed_runs[0].bytes.data() + 12);
  // Byte arrays likewise (here from the dictionary page, stored uncompressed).
  const ColumnBuffer& strings = (*r)[1];
  ASSERT_EQ(strings.width, 0u);
  size_t viewed = 0;
  for (std::string_view v : strings.binary) viewed += !v.empty() && inside(v);
  EXPECT_GT(viewed, 0u);
}

}  // namespace
}  // namespace sluice::parquet

// ParquetShardReader with ColumnDecodeOptions::lazy_rows (pages decoded as
// rows are read, ColumnChunkCursor) against the reader that decodes the
// whole row group at Open: the same fields, byte for byte, and the same
// element masks, for every fixture's every row group, read in order, from
// many start rows and at random; and the pages a first row and a resume
// decode, counted (data_pages_decoded) against the chunks' own pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/file.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/page_reader.h"
#include "formats/parquet/parquet_shard_reader.h"

namespace sluice::parquet {
namespace {

const std::string kLazyFixturesDir = std::string(SLUICE_TEST_DATA_DIR) + "/parquet";

std::vector<std::string> LazyFixtureNames() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kLazyFixturesDir)) {
    const std::string rel = std::filesystem::relative(e.path(), kLazyFixturesDir).string();
    if (rel.ends_with(".parquet") && !rel.starts_with("bad_")) names.push_back(rel);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string LazyTestName(const std::string& rel) {
  std::string n = rel.substr(0, rel.size() - std::string(".parquet").size());
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

// A row as comparable text: each field's bytes (or "null") and its mask.
std::string RowText(const ParquetShardReader& r, uint32_t row) {
  std::vector<std::string_view> fields;
  std::vector<MaskedField> masked;
  Status s = r.ReadRow(row, &fields, &masked);
  if (!s.ok()) return "<" + s.ToString() + ">";
  std::string out;
  for (std::string_view f : fields) {
    out += f.data() == nullptr ? std::string("null") : "[" + std::string(f) + "]";
    out += '|';
  }
  for (const MaskedField& m : masked) out += "mask:" + std::string(m.validity) + "|";
  return out;
}

struct Group {
  std::string bytes;
  std::string name;
  size_t row_group = 0;
  uint64_t rows = 0;
};

// The fixture's row groups that the reader reads (all columns).
std::vector<Group> GroupsOf(const std::string& rel) {
  std::vector<Group> groups;
  Result<std::string> bytes = ReadFile(kLazyFixturesDir + "/" + rel);
  if (!bytes.ok()) return groups;
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(bytes->substr(offset, size));
    return Status::Ok();
  };
  Result<FileFooter> footer = ReadFooter(bytes->size(), read, rel);
  if (!footer.ok()) return groups;
  for (size_t g = 0; g < footer->meta.row_groups.size(); ++g) {
    groups.push_back(Group{*bytes, rel, g, static_cast<uint64_t>(footer->meta.row_groups[g].num_rows)});
  }
  return groups;
}

Result<ParquetShardReader> OpenLazy(const Group& g, uint64_t step_levels = 8192) {
  ColumnDecodeOptions lazy;
  lazy.lazy_rows = true;
  lazy.lazy_step_levels = step_levels;
  // Byte arrays of a dictionary left compressed step as finely.
  lazy.lazy_dictionary_step_levels = std::min(step_levels, lazy.lazy_dictionary_step_levels);
  return ParquetShardReader::Open(g.bytes, g.name, g.row_group, g.rows, lazy);
}

class LazyRows : public ::testing::TestWithParam<std::string> {};

TEST_P(LazyRows, SameRowsAsTheWholeGroupInOrderFromEveryStartAndAtRandom) {
  size_t groups_read = 0;
  for (const Group& g : GroupsOf(GetParam())) {
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, g.row_group, g.rows);
    if (!whole.ok()) continue;  // a field the reader refuses (its own tests)
    ++groups_read;
    const auto rows = static_cast<uint32_t>(g.rows);
    std::vector<std::string> expected(rows);
    for (uint32_t r = 0; r < rows; ++r) expected[r] = RowText(*whole, r);
    SCOPED_TRACE(g.name + " row group " + std::to_string(g.row_group));
    {
      Result<ParquetShardReader> lazy = OpenLazy(g);
      ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
      for (uint32_t r = 0; r < rows; ++r) ASSERT_EQ(RowText(*lazy, r), expected[r]) << "row " << r;
      EXPECT_EQ(lazy->has_masked_rows(), whole->has_masked_rows());
    }
    // From a start row to the end, then the rows before it (a seek back).
    const uint32_t stride = std::max<uint32_t>(1, rows / 64);
    for (uint32_t start = 0; start < rows; start += stride) {
      Result<ParquetShardReader> lazy = OpenLazy(g);
      ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
      for (uint32_t r = start; r < rows; ++r) {
        ASSERT_EQ(RowText(*lazy, r), expected[r]) << "start " << start << " row " << r;
      }
      for (uint32_t r = 0; r < start; ++r) {
        ASSERT_EQ(RowText(*lazy, r), expected[r]) << "start " << start << ", back to row " << r;
      }
    }
    std::mt19937 rng(35);
    Result<ParquetShardReader> lazy = OpenLazy(g);
    ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
    for (uint32_t k = 0; k < 3 * rows; ++k) {
      const uint32_t r = static_cast<uint32_t>(rng() % rows);
      ASSERT_EQ(RowText(*lazy, r), expected[r]) << "seek " << k << " to row " << r;
    }
  }
  if (groups_read == 0) GTEST_SKIP() << "no row group the reader reads whole";
}

// Pages of dictionary-encoded fixed-width values decoded 3 level entries a
// step (lazy_step_levels): rows end inside steps, steps inside rows and
// lists, nulls fall anywhere; every row as the whole group's, in order,
// from a few starts, and at random.
TEST_P(LazyRows, SameRowsAsTheWholeGroupInStepsOfThreeLevels) {
  size_t groups_read = 0;
  for (const Group& g : GroupsOf(GetParam())) {
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, g.row_group, g.rows);
    if (!whole.ok()) continue;
    ++groups_read;
    const auto rows = static_cast<uint32_t>(g.rows);
    SCOPED_TRACE(g.name + " row group " + std::to_string(g.row_group));
    for (uint32_t start : {0u, rows / 3, rows - 1}) {
      Result<ParquetShardReader> lazy = OpenLazy(g, 3);
      ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
      for (uint32_t r = start; r < rows; ++r) {
        ASSERT_EQ(RowText(*lazy, r), RowText(*whole, r)) << "start " << start << " row " << r;
      }
      for (uint32_t r = 0; r < start; ++r) ASSERT_EQ(RowText(*lazy, r), RowText(*whole, r)) << "row " << r;
      EXPECT_EQ(lazy->has_masked_rows(), whole->has_masked_rows());
    }
    std::mt19937 rng(36);
    Result<ParquetShardReader> lazy = OpenLazy(g, 3);
    ASSERT_TRUE(lazy.ok());
    for (uint32_t k = 0; k < rows; ++k) {
      const uint32_t r = static_cast<uint32_t>(rng() % rows);
      ASSERT_EQ(RowText(*lazy, r), RowText(*whole, r)) << "seek " << k << " to row " << r;
    }
  }
  if (groups_read == 0) GTEST_SKIP() << "no row group the reader reads whole";
}

INSTANTIATE_TEST_SUITE_P(Parquet, LazyRows, ::testing::ValuesIn(LazyFixtureNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return LazyTestName(i.param);
                         });

// Each chunk's data pages and the rows each starts, counted here from the
// headers (and a list column's repetition levels, decoded by the whole
// reader: the rows of its buffer up to the page's slots).
struct ChunkPages {
  std::vector<uint64_t> values;  // per data page
};

// The footer of `g`'s file, read from its bytes.
Result<FileFooter> FooterOf(const Group& g) {
  RangeReader read = [&](uint64_t offset, uint64_t size, std::string* out) {
    out->assign(g.bytes.substr(offset, size));
    return Status::Ok();
  };
  return ReadFooter(g.bytes.size(), read, g.name);
}

// The index of the schema field named `name` (fields.size() when none is).
size_t FieldNamed(const FileFooter& footer, std::string_view name) {
  for (size_t f = 0; f < footer.schema.fields.size(); ++f) {
    if (footer.schema.fields[f].name == name) return f;
  }
  return footer.schema.fields.size();
}

ChunkPages PagesOf(const Group& g, size_t field) {
  ChunkPages pages;
  Result<FileFooter> footer = FooterOf(g);
  EXPECT_TRUE(footer.ok());
  const size_t leaf = footer->schema.fields[field].first_leaf;
  const ByteRange r = footer->chunk_ranges[g.row_group][leaf];
  PageReader reader(std::string_view(g.bytes).substr(r.offset, r.size), r.offset,
                    footer->chunk(g.row_group, leaf).codec, g.name);
  Page page;
  while (true) {
    Result<bool> more = reader.NextHeader(&page);
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) break;
    if (page.header.type == PageType::kDataPage) {
      pages.values.push_back(static_cast<uint64_t>(page.header.data_page_header->num_values));
    } else if (page.header.type == PageType::kDataPageV2) {
      pages.values.push_back(static_cast<uint64_t>(page.header.data_page_header_v2->num_values));
    }
  }
  return pages;
}

Group FixtureGroup(const std::string& rel, size_t row_group) {
  std::vector<Group> groups = GroupsOf(rel);
  EXPECT_GT(groups.size(), row_group) << rel;
  return groups.size() > row_group ? groups[row_group] : Group{};
}

// pa26_plain_pages_v1: flat columns of several data pages each.
TEST(LazyRowsPages, FirstRowDecodesOneDataPageOfEachColumn) {
  for (const std::string rel : {"pa26_plain_pages_v1.parquet", "pa26_plain_pages_v2.parquet",
                                "pa26_lists_v2_small_pages.parquet"}) {
    SCOPED_TRACE(rel);
    const Group g = FixtureGroup(rel, 0);
    Result<ParquetShardReader> lazy = OpenLazy(g);
    ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
    const size_t columns = lazy->column_names().size();
    size_t pages = 0;
    for (size_t f = 0; f < columns; ++f) pages += PagesOf(g, f).values.size();
    ASSERT_GT(pages, 2 * columns) << "the fixture's chunks should hold several pages";
    EXPECT_EQ(lazy->data_pages_decoded(), 0u);
    std::vector<std::string_view> fields;
    std::vector<MaskedField> masked;
    ASSERT_TRUE(lazy->ReadRow(0, &fields, &masked).ok());
    EXPECT_EQ(lazy->data_pages_decoded(), columns);
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->data_pages_decoded(), pages);
  }
}

// A bad page under lazy_rows: the open succeeds (no page is decoded), and
// the read that reaches the page fails with the whole open's error, naming
// the file, row group, column and page offset.
TEST(LazyRowsBadPages, AReadReachingABadPageFailsWithTheWholeOpensError) {
  for (const std::string rel :
       {"bad_page_compressed_size.parquet", "bad_page_crc_mismatch_v1.parquet",
        "bad_page_crc_mismatch_v2.parquet", "bad_page_gzip_corrupt.parquet",
        "bad_page_uncompressed_size.parquet"}) {
    SCOPED_TRACE(rel);
    const Group g = FixtureGroup(rel, 0);
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
    ASSERT_FALSE(whole.ok());
    EXPECT_NE(whole.status().ToString().find(rel + ": row group 0 column \""), std::string::npos)
        << whole.status().ToString();
    Result<ParquetShardReader> lazy = OpenLazy(g);
    ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
    std::vector<std::string_view> fields;
    std::vector<MaskedField> masked;
    Status first = Status::Ok();
    for (uint64_t row = 0; row < g.rows && first.ok(); ++row) {
      first = lazy->ReadRow(static_cast<uint32_t>(row), &fields, &masked);
    }
    EXPECT_EQ(first.ToString(), whole.status().ToString());
  }
}

// A first read at row R (a resume) decodes R's page of each column and
// none before it: for a flat column R's page is found by the headers'
// value counts.
TEST(LazyRowsPages, ResumeAtRowDecodesOnlyThePagesFromItsPageOn) {
  for (const std::string rel : {"pa26_plain_pages_v1.parquet", "pa26_plain_pages_v2.parquet"}) {
    SCOPED_TRACE(rel);
    const Group g = FixtureGroup(rel, 0);
    Result<ParquetShardReader> probe = OpenLazy(g);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    const size_t columns = probe->column_names().size();
    // The last row of the first column's last page but one: every column
    // has pages before it to skip.
    const ChunkPages first = PagesOf(g, 0);
    ASSERT_GE(first.values.size(), 3u);
    uint64_t before_last = 0;
    for (size_t p = 0; p + 1 < first.values.size(); ++p) before_last += first.values[p];
    const auto row = static_cast<uint32_t>(before_last - 1);
    // The pages wholly before `row` in each column, and those it spans.
    size_t skippable = 0;
    for (size_t f = 0; f < columns; ++f) {
      uint64_t at = 0;
      for (uint64_t v : PagesOf(g, f).values) {
        if (at + v <= row) ++skippable;
        at += v;
      }
    }
    ASSERT_GT(skippable, columns);
    Result<ParquetShardReader> lazy = OpenLazy(g);
    ASSERT_TRUE(lazy.ok());
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(RowText(*lazy, row), RowText(*whole, row));
    EXPECT_EQ(lazy->data_pages_decoded(), columns);
    // Reading on to the end decodes the rest, and none of the skipped.
    for (uint32_t r = row; r < g.rows; ++r) ASSERT_EQ(RowText(*lazy, r), RowText(*whole, r));
    EXPECT_EQ(lazy->data_pages_decoded() + skippable, whole->data_pages_decoded());
  }
}

// hf_text's token ids: one dictionary-encoded data page of 6,490 ids for
// 64 rows. A cursor's first row decodes one step of 256 level entries, not
// the page; its rows then, and every row once decoded on, are the whole
// decode's, offsets and values byte for byte.
TEST(LazyRowsPages, FirstRowOfADictionaryPageDecodesOneStepOfItsLevels) {
  const Group g = FixtureGroup("hf_text.parquet", 0);
  Result<FileFooter> footer = FooterOf(g);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  const size_t field = FieldNamed(*footer, "input_ids");
  ASSERT_LT(field, footer->schema.fields.size());
  const ByteRange range = footer->chunk_ranges[0][footer->schema.fields[field].first_leaf];
  const std::string_view chunk = std::string_view(g.bytes).substr(range.offset, range.size);
  Result<ColumnBuffer> whole = DecodeColumnChunk(*footer, 0, field, chunk, g.name);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_EQ(whole->validity.size(), 6490u);
  ASSERT_EQ(PagesOf(g, field).values.size(), 1u) << "one data page";
  ColumnDecodeOptions options;
  options.lazy_rows = true;
  options.lazy_step_levels = 256;
  Result<std::unique_ptr<ColumnChunkCursor>> cursor =
      ColumnChunkCursor::Open(*footer, 0, field, chunk, g.name, options);
  ASSERT_TRUE(cursor.ok()) << cursor.status().ToString();
  // The ids of row r as bytes, from a buffer's list offsets and values.
  auto ids = [](const ColumnBuffer& b, size_t r) {
    std::string out;
    for (int64_t i = b.lists[0].offsets[r]; i < b.lists[0].offsets[r + 1]; ++i) {
      out += std::string(b.fixed_value(static_cast<size_t>(i)));
    }
    return out;
  };
  ASSERT_TRUE((*cursor)->DecodeThrough(0).ok());
  EXPECT_EQ((*cursor)->levels_decoded(), 256u);
  EXPECT_EQ((*cursor)->data_pages_decoded(), 1u);
  ASSERT_GE((*cursor)->end_row(), 1u);
  ASSERT_LT((*cursor)->end_row(), 64u);
  EXPECT_FALSE((*cursor)->done());
  for (uint64_t r = 0; r < (*cursor)->end_row(); ++r) EXPECT_EQ(ids((*cursor)->buffer(), r), ids(*whole, r)) << r;
  ASSERT_TRUE((*cursor)->DecodeThrough(40).ok());
  EXPECT_LT((*cursor)->levels_decoded(), 6490u);
  ASSERT_TRUE((*cursor)->DecodeThrough(UINT64_MAX).ok());
  EXPECT_TRUE((*cursor)->done());
  EXPECT_EQ((*cursor)->levels_decoded(), 6490u);
  EXPECT_EQ((*cursor)->buffer().lists[0].offsets.size(), 65u);
  for (size_t r = 0; r < 64; ++r) ASSERT_EQ(ids((*cursor)->buffer(), r), ids(*whole, r)) << r;
  // The page's values are one run, as the whole decode's.
  EXPECT_EQ((*cursor)->buffer().fixed_runs.size(), whole->fixed_runs.size());
}

// hf_text's text: a SNAPPY dictionary page of its 64 strings (20,957
// bytes) and one data page of their indices. A cursor stepping 4 level
// entries at a time decompresses the dictionary only as far as its first
// rows' entries, then as rows go on, and whole at the chunk's end; every
// row is the whole decode's, byte for byte. With the steps off the page is
// decompressed whole at once, never left compressed.
TEST(LazyRowsPages, FirstRowsOfTextDecompressOnlyTheirDictionaryEntries) {
  const Group g = FixtureGroup("hf_text.parquet", 0);
  Result<FileFooter> footer = FooterOf(g);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  const size_t field = FieldNamed(*footer, "text");
  ASSERT_LT(field, footer->schema.fields.size());
  const size_t leaf = footer->schema.fields[field].first_leaf;
  ASSERT_EQ(footer->chunk(0, leaf).codec, CompressionCodec::kSnappy);
  const ByteRange range = footer->chunk_ranges[0][leaf];
  const std::string_view chunk = std::string_view(g.bytes).substr(range.offset, range.size);
  PageReader pages(chunk, range.offset, CompressionCodec::kSnappy, g.name);
  Page first;
  ASSERT_TRUE(pages.NextHeader(&first).ok());
  ASSERT_EQ(first.header.type, PageType::kDictionaryPage);
  const auto dictionary_bytes = static_cast<uint64_t>(first.header.uncompressed_page_size);
  ASSERT_EQ(PagesOf(g, field).values.size(), 1u) << "one data page";
  Result<ColumnBuffer> whole = DecodeColumnChunk(*footer, 0, field, chunk, g.name);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_EQ(whole->binary.size(), 64u);
  ColumnDecodeOptions options;
  options.lazy_rows = true;
  options.lazy_dictionary_step_levels = 4;
  Result<std::unique_ptr<ColumnChunkCursor>> cursor =
      ColumnChunkCursor::Open(*footer, 0, field, chunk, g.name, options);
  ASSERT_TRUE(cursor.ok()) << cursor.status().ToString();
  const auto same_rows = [&](const ColumnChunkCursor& c) {
    for (uint64_t r = 0; r < c.end_row(); ++r) {
      ASSERT_EQ(c.buffer().binary[r], whole->binary[r]) << r;
    }
  };
  ASSERT_TRUE((*cursor)->DecodeThrough(0).ok());
  EXPECT_EQ((*cursor)->levels_decoded(), 4u);
  EXPECT_EQ((*cursor)->end_row(), 4u);
  const uint64_t first_rows = (*cursor)->dictionary_bytes_decompressed();
  EXPECT_GT(first_rows, 0u);
  EXPECT_LT(first_rows, dictionary_bytes / 8);
  same_rows(**cursor);
  ASSERT_TRUE((*cursor)->DecodeThrough(40).ok());
  EXPECT_EQ((*cursor)->end_row(), 44u);
  EXPECT_GT((*cursor)->dictionary_bytes_decompressed(), first_rows);
  EXPECT_LT((*cursor)->dictionary_bytes_decompressed(), dictionary_bytes);
  same_rows(**cursor);
  ASSERT_TRUE((*cursor)->DecodeThrough(UINT64_MAX).ok());
  EXPECT_TRUE((*cursor)->done());
  EXPECT_EQ((*cursor)->dictionary_bytes_decompressed(), dictionary_bytes);
  ASSERT_EQ((*cursor)->end_row(), 64u);
  same_rows(**cursor);

  options.lazy_dictionary_step_levels = 0;
  Result<std::unique_ptr<ColumnChunkCursor>> eager =
      ColumnChunkCursor::Open(*footer, 0, field, chunk, g.name, options);
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  ASSERT_TRUE((*eager)->DecodeThrough(0).ok());
  EXPECT_EQ((*eager)->dictionary_bytes_decompressed(), 0u);
  EXPECT_EQ((*eager)->end_row(), 64u);
  same_rows(**eager);
}

// hf_text with its text dictionary page's first snappy tag made a copy
// from before the block's start: the first lazy read, which decompresses
// that page only in part, fails with the whole open's error, word for word.
TEST(LazyRowsBadPages, ADictionaryLeftCompressedFailsWithTheWholeOpensError) {
  Group g = FixtureGroup("hf_text.parquet", 0);
  Result<FileFooter> footer = FooterOf(g);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  const size_t leaf = footer->schema.fields[0].first_leaf;
  ASSERT_EQ(footer->schema.leaves[leaf].path, "text");
  const ByteRange range = footer->chunk_ranges[0][leaf];
  PageReader pages(std::string_view(g.bytes).substr(range.offset, range.size), range.offset,
                   CompressionCodec::kSnappy, g.name);
  Page dictionary;
  ASSERT_TRUE(pages.NextHeader(&dictionary).ok());
  ASSERT_EQ(dictionary.header.type, PageType::kDictionaryPage);
  ASSERT_FALSE(dictionary.header.crc.has_value());
  // The block starts with its length's varint (20,957: 3 bytes).
  const size_t block = range.offset + pages.position() -
                       static_cast<size_t>(dictionary.header.compressed_page_size);
  ASSERT_EQ(static_cast<unsigned char>(g.bytes[block + 2]) & 0x80, 0);
  g.bytes[block + 3] = '\xff';
  Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
  ASSERT_FALSE(whole.ok());
  EXPECT_NE(whole.status().ToString().find("hf_text.parquet: row group 0 column \"text\": page at offset " +
                                           std::to_string(range.offset) + ": "),
            std::string::npos)
      << whole.status().ToString();
  Result<ParquetShardReader> lazy = OpenLazy(g);
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  std::vector<std::string_view> fields;
  std::vector<MaskedField> masked;
  EXPECT_EQ(lazy->ReadRow(0, &fields, &masked).ToString(), whole.status().ToString());
}

// A list column's pages are found by their repetition levels: a resume in
// the last page of pa26_lists_v2_small_pages decodes one page a column.
TEST(LazyRowsPages, ResumeInAListColumnSkipsPagesByRepetitionLevels) {
  const Group g = FixtureGroup("pa26_lists_v2_small_pages.parquet", 0);
  Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const auto row = static_cast<uint32_t>(g.rows - 1);
  Result<ParquetShardReader> lazy = OpenLazy(g);
  ASSERT_TRUE(lazy.ok());
  EXPECT_EQ(RowText(*lazy, row), RowText(*whole, row));
  EXPECT_EQ(lazy->data_pages_decoded(), lazy->column_names().size());
  EXPECT_LT(lazy->data_pages_decoded(), whole->data_pages_decoded());
}

// Threads reading one lazy reader at once, each in its own order, some
// taking large values as pieces (whose spans must outlive the pages decoded
// after them), see the rows of the reader that decoded the group at Open.
TEST(LazyRowsThreads, ConcurrentReadersSeeTheWholeGroupsRows) {
  for (const std::string rel : {"pa26_plain_pages_v1.parquet", "pa26_lists_v2_small_pages.parquet",
                                "pa26_snappy_random_v1.parquet", "hf_image.parquet"}) {
    SCOPED_TRACE(rel);
    const Group g = FixtureGroup(rel, 0);
    Result<ParquetShardReader> whole = ParquetShardReader::Open(g.bytes, g.name, 0, g.rows);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    const auto rows = static_cast<uint32_t>(g.rows);
    std::vector<std::string> expected(rows);
    for (uint32_t r = 0; r < rows; ++r) expected[r] = RowText(*whole, r);
    Result<ParquetShardReader> lazy = OpenLazy(g);
    ASSERT_TRUE(lazy.ok());
    constexpr int kThreads = 4;
    std::vector<std::vector<std::string>> got(kThreads, std::vector<std::string>(rows));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(t);
        std::vector<uint32_t> order(rows);
        for (uint32_t r = 0; r < rows; ++r) order[r] = t % 2 == 0 ? r : rows - 1 - r;
        if (t == 3) std::shuffle(order.begin(), order.end(), rng);
        // Thread 1 takes pieces: each row's spans are read after the rows
        // read after it (and their pages) are.
        std::vector<std::vector<std::string_view>> fields(rows);
        std::vector<std::vector<PiecedField>> pieced(rows);
        for (uint32_t r : order) {
          if (t != 1) {
            got[t][r] = RowText(*lazy, r);
            continue;
          }
          std::vector<MaskedField> masked;
          Status s = lazy->ReadRow(r, &fields[r], &masked, nullptr, &pieced[r]);
          if (!s.ok()) got[t][r] = "<" + s.ToString() + ">";
        }
        if (t != 1) return;
        for (uint32_t r : order) {
          if (!got[t][r].empty()) continue;
          std::string out;
          for (std::string_view f : fields[r]) {
            std::string bytes;
            auto p = std::find_if(pieced[r].begin(), pieced[r].end(),
                                  [&](const PiecedField& pf) { return pf.field.data() == f.data(); });
            if (f.data() != nullptr && p != pieced[r].end()) {
              for (std::string_view piece : p->pieces) bytes += piece;
            } else {
              bytes = std::string(f);
            }
            out += f.data() == nullptr ? std::string("null") : "[" + bytes + "]";
            out += '|';
          }
          got[t][r] = out;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      for (uint32_t r = 0; r < rows; ++r) {
        if (t == 1 && expected[r].find("mask:") != std::string::npos) continue;  // masks not kept
        ASSERT_EQ(got[t][r], expected[r]) << "thread " << t << " row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace sluice::parquet

// The index's footer decode (IndexFooterOptions: the fields an index reads,
// the rest skipped) against the full one on every fixture, and the first
// corrupt footer among many files named, corrupt in a field the index skips.
#include "formats/parquet/parquet_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/file.h"
#include "tests/formats/parquet/test_footer.h"

namespace sluice::parquet {
namespace {

RangeReader ReaderOf(const std::string& bytes) {
  return [&bytes](uint64_t offset, uint64_t size, std::string* out) {
    if (offset > bytes.size() || size > bytes.size() - offset) return IoError("past the end");
    out->assign(bytes, offset, size);
    return Status::Ok();
  };
}

// What an index reads of a footer, compared field by field.
void ExpectSameForIndex(const FileFooter& full, const FileFooter& lean, const std::string& name) {
  EXPECT_EQ(lean.file_size, full.file_size) << name;
  EXPECT_EQ(lean.metadata_length, full.metadata_length) << name;
  EXPECT_EQ(lean.meta.num_rows, full.meta.num_rows) << name;
  ASSERT_EQ(lean.meta.row_groups.size(), full.meta.row_groups.size()) << name;
  for (size_t rg = 0; rg < full.meta.row_groups.size(); ++rg) {
    const RowGroup& a = full.meta.row_groups[rg];
    const RowGroup& b = lean.meta.row_groups[rg];
    EXPECT_EQ(b.num_rows, a.num_rows) << name << " rg " << rg;
    ASSERT_EQ(b.columns.size(), a.columns.size()) << name << " rg " << rg;
    for (size_t c = 0; c < a.columns.size(); ++c) {
      const std::string at = name + " rg " + std::to_string(rg) + " chunk " + std::to_string(c);
      ASSERT_EQ(b.columns[c].meta_data.has_value(), a.columns[c].meta_data.has_value()) << at;
      EXPECT_EQ(b.columns[c].file_offset, a.columns[c].file_offset) << at;
      if (!a.columns[c].meta_data) continue;
      const ColumnMetaData& x = *a.columns[c].meta_data;
      const ColumnMetaData& y = *b.columns[c].meta_data;
      EXPECT_EQ(y.type, x.type) << at;
      EXPECT_EQ(y.path_in_schema, x.path_in_schema) << at;
      EXPECT_EQ(y.codec, x.codec) << at;
      EXPECT_EQ(y.num_values, x.num_values) << at;
      EXPECT_EQ(y.total_uncompressed_size, x.total_uncompressed_size) << at;
      EXPECT_EQ(y.total_compressed_size, x.total_compressed_size) << at;
      EXPECT_EQ(y.data_page_offset, x.data_page_offset) << at;
      EXPECT_EQ(y.dictionary_page_offset, x.dictionary_page_offset) << at;
      // Skipped: left empty.
      EXPECT_TRUE(y.encodings.empty()) << at;
      EXPECT_FALSE(y.statistics) << at;
      EXPECT_TRUE(y.encoding_stats.empty()) << at;
      EXPECT_TRUE(y.key_value_metadata.empty()) << at;
    }
    ASSERT_EQ(lean.chunk_ranges[rg].size(), full.chunk_ranges[rg].size()) << name;
    for (size_t c = 0; c < full.chunk_ranges[rg].size(); ++c) {
      EXPECT_EQ(lean.chunk_ranges[rg][c].offset, full.chunk_ranges[rg][c].offset) << name;
      EXPECT_EQ(lean.chunk_ranges[rg][c].size, full.chunk_ranges[rg][c].size) << name;
    }
  }
  EXPECT_TRUE(lean.meta.key_value_metadata.empty()) << name;
  EXPECT_FALSE(lean.meta.created_by) << name;
  ASSERT_EQ(lean.schema.leaves.size(), full.schema.leaves.size()) << name;
  for (size_t i = 0; i < full.schema.leaves.size(); ++i) {
    const LeafColumn& a = full.schema.leaves[i];
    const LeafColumn& b = lean.schema.leaves[i];
    EXPECT_EQ(b.path, a.path) << name;
    EXPECT_EQ(b.path_parts, a.path_parts) << name;
    EXPECT_EQ(b.physical_type, a.physical_type) << name;
    EXPECT_EQ(b.type_length, a.type_length) << name;
    EXPECT_EQ(b.logical_type.kind, a.logical_type.kind) << name;
    EXPECT_EQ(b.converted_type, a.converted_type) << name;
    EXPECT_EQ(b.scale, a.scale) << name;
    EXPECT_EQ(b.precision, a.precision) << name;
    EXPECT_EQ(b.max_definition_level, a.max_definition_level) << name;
    EXPECT_EQ(b.max_repetition_level, a.max_repetition_level) << name;
    EXPECT_EQ(b.field, a.field) << name;
  }
  ASSERT_EQ(lean.schema.fields.size(), full.schema.fields.size()) << name;
  for (size_t i = 0; i < full.schema.fields.size(); ++i) {
    const Field& a = full.schema.fields[i];
    const Field& b = lean.schema.fields[i];
    EXPECT_EQ(b.name, a.name) << name;
    EXPECT_EQ(b.list_depth, a.list_depth) << name;
    EXPECT_EQ(b.first_leaf, a.first_leaf) << name;
    EXPECT_EQ(b.leaf_count, a.leaf_count) << name;
    EXPECT_EQ(b.unsupported, a.unsupported) << name;
  }
}

// Every fixture's footer decoded twice, in turn, into one FileFooter (as
// the index's decode threads do): whenever its schema was kept, the
// configuration and fields of the last ShardRowsOfFile with this file's
// ShardRowGroupsOfFile give ShardRowsOfFile's answer, for all columns and
// for the last field alone.
TEST(IndexFooter, ShardRowsWithAKeptSchemaAreShardRowsOfFile) {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SLUICE_TEST_DATA_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  FileFooter footer;
  std::optional<FileShardRows> last[2];  // the shard rows of the kept schema
  // ShardRowGroupsOfFileInto's kept vector, holding the last file's groups.
  std::vector<uint32_t> into = {77, 78};
  size_t compared = 0;
  for (const std::string& path : paths) {
    auto bytes = ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << path;
    const std::string name = std::filesystem::path(path).filename();
    auto length = ParseFooterLength(*bytes, bytes->size(), name);
    if (!length.ok()) continue;
    const std::string_view metadata =
        std::string_view(*bytes).substr(bytes->size() - 8 - *length, *length);
    const ListedFile file{name, bytes->size(), ""};
    for (int twice = 0; twice < 2; ++twice) {
      const Status decoded =
          DecodeFooterInto(metadata, bytes->size(), name, IndexFooterOptions(), &footer);
      if (!decoded.ok() || !footer.schema_source.kept) last[0] = last[1] = std::nullopt;
      if (!decoded.ok()) continue;
      const std::vector<std::string> each[2] = {{}, {footer.schema.fields.back().name}};
      for (int c = 0; c < 2; ++c) {
        auto want = ShardRowsOfFile(file, footer, each[c]);
        if (!last[c]) {
          if (want.ok()) last[c] = *want;
          continue;
        }
        auto got = ShardRowGroupsOfFile(file, footer);
        const Status got_into = ShardRowGroupsOfFileInto(file, footer, &into);
        ASSERT_EQ(got.ok(), want.ok()) << name;
        ASSERT_EQ(got_into.ok(), want.ok()) << name;
        ++compared;
        if (!want.ok()) {
          EXPECT_EQ(got.status().ToString(), want.status().ToString()) << name;
          EXPECT_EQ(got_into.ToString(), want.status().ToString()) << name;
          continue;
        }
        EXPECT_EQ(into, want->row_groups) << name;
        EXPECT_EQ(last[c]->config.format, want->config.format) << name;
        EXPECT_EQ(last[c]->config.column_names, want->config.column_names) << name;
        EXPECT_EQ(last[c]->config.column_encodings, want->config.column_encodings) << name;
        EXPECT_EQ(*got, want->row_groups) << name;
        EXPECT_EQ(last[c]->fields, want->fields) << name;
      }
    }
  }
  EXPECT_GE(compared, 100u);
}

// The index's decode into one FileFooter file after file (as a decoding
// thread's) gives each file's fresh decode, field for field, in path
// order, in reverse and with a file of 3 row groups of 7 chunks between
// each two: the same values, nothing left of a larger or other footer or
// of a footer that failed, the same errors. (A quick walk that failed once
// left its new schema's bytes: the next file of that schema kept
// the Schema built from the file before, "bad_page_uncompressed_size.parquet:
// row group 0 has 5 column chunks, the schema 26 leaf columns".)
TEST(IndexFooter, DecodedIntoOneFooterInTurnIsEachFilesFreshDecode) {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SLUICE_TEST_DATA_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  const std::string lists = std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa12_lists_v1.parquet";
  std::vector<std::string> order = paths;
  order.insert(order.end(), paths.rbegin(), paths.rend());
  for (const std::string& path : paths) {
    order.push_back(lists);
    order.push_back(path);
  }
  FileFooter into;
  size_t compared = 0;
  std::string last;  // the file decoded before, named in failures
  for (const std::string& path : order) {
    auto bytes = ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << path;
    const std::string name = std::filesystem::path(path).filename();
    Result<FileFooter> fresh =
        ReadFooter(bytes->size(), ReaderOf(*bytes), name, IndexFooterOptions());
    auto length = ParseFooterLength(*bytes, bytes->size(), name);
    if (!length.ok() || *length + 8 > bytes->size()) continue;
    const std::string_view metadata =
        std::string_view(*bytes).substr(bytes->size() - 8 - *length, *length);
    const Status s = DecodeFooterInto(metadata, bytes->size(), name, IndexFooterOptions(), &into);
    const std::string after = std::exchange(last, name);
    if (!fresh.ok()) {
      if (!s.ok()) {
        EXPECT_EQ(s.ToString(), fresh.status().ToString()) << name;
      }
      continue;
    }
    ASSERT_TRUE(s.ok()) << name << " after " << after << ": " << s.ToString();
    ++compared;
    ExpectSameForIndex(*fresh, into, name);
    for (size_t rg = 0; rg < fresh->meta.row_groups.size(); ++rg) {
      const RowGroup& a = fresh->meta.row_groups[rg];
      const RowGroup& b = into.meta.row_groups[rg];
      EXPECT_EQ(b.total_byte_size, a.total_byte_size) << name;
      EXPECT_EQ(b.file_offset, a.file_offset) << name;
      EXPECT_EQ(b.total_compressed_size, a.total_compressed_size) << name;
      EXPECT_EQ(b.ordinal, a.ordinal) << name;
      for (size_t c = 0; c < a.columns.size(); ++c) {
        EXPECT_EQ(b.columns[c].file_path, a.columns[c].file_path) << name;
        EXPECT_EQ(b.columns[c].encrypted, a.columns[c].encrypted) << name;
        if (!a.columns[c].meta_data) continue;
        EXPECT_EQ(b.columns[c].meta_data->index_page_offset,
                  a.columns[c].meta_data->index_page_offset) << name;
        EXPECT_EQ(b.columns[c].meta_data->bloom_filter_offset,
                  a.columns[c].meta_data->bloom_filter_offset) << name;
      }
    }
  }
  EXPECT_GE(compared, 150u);
}

// Every Parquet file under tests/data read both ways: the same error, or
// the same row counts, chunk ranges, schema and shards (ShardRowsOfFile);
// and the index's footer without what it skipped, which the full one has
// (so the fixtures do exercise the skip).
TEST(IndexFooter, AgreesWithTheFullDecodeOnEveryFixtureFooter) {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SLUICE_TEST_DATA_DIR)) {
    if (e.is_regular_file() && e.path().extension() == ".parquet") paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 60u);
  size_t ok = 0, with_statistics = 0, with_key_values = 0;
  for (const std::string& path : paths) {
    auto bytes = ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << path;
    const std::string name = std::filesystem::path(path).filename();
    Result<FileFooter> full = ReadFooter(bytes->size(), ReaderOf(*bytes), name);
    Result<FileFooter> lean = ReadFooter(bytes->size(), ReaderOf(*bytes), name,
                                         IndexFooterOptions());
    ASSERT_EQ(lean.ok(), full.ok()) << name << ": " << full.status().ToString() << " / "
                                    << lean.status().ToString();
    if (!full.ok()) {
      EXPECT_EQ(lean.status().ToString(), full.status().ToString()) << name;
      continue;
    }
    ++ok;
    ExpectSameForIndex(*full, *lean, name);
    if (!full->meta.key_value_metadata.empty()) ++with_key_values;
    for (const RowGroup& g : full->meta.row_groups) {
      if (!g.columns.empty() && g.columns[0].meta_data && g.columns[0].meta_data->statistics) {
        ++with_statistics;
        break;
      }
    }
    const ListedFile file{name, bytes->size(), ""};
    for (const std::vector<std::string>& columns :
         {std::vector<std::string>{}, std::vector<std::string>{full->schema.fields.back().name}}) {
      auto a = ShardRowsOfFile(file, *full, columns);
      auto b = ShardRowsOfFile(file, *lean, columns);
      ASSERT_EQ(b.ok(), a.ok()) << name;
      if (!a.ok()) {
        EXPECT_EQ(b.status().ToString(), a.status().ToString()) << name;
        continue;
      }
      EXPECT_EQ(b->config.column_names, a->config.column_names) << name;
      EXPECT_EQ(b->config.column_encodings, a->config.column_encodings) << name;
      EXPECT_EQ(b->row_groups, a->row_groups) << name;
      EXPECT_EQ(b->fields, a->fields) << name;
    }
  }
  EXPECT_GE(ok, 50u);
  EXPECT_GE(with_statistics, 20u);
  EXPECT_GE(with_key_values, 20u);
}

// A file of one INT32 column "a" (one row group of 5 rows, its chunk at
// [4, 14)) whose chunk has statistics; `bad_statistics`: a field header of
// the unknown type 14 inside them, which the index skips but must walk.
std::string FileWithStatistics(bool bad_statistics) {
  testing::TestFooterSpec spec;
  spec.statistics = true;
  spec.bad_statistics = bad_statistics;
  return testing::TestParquetFile(testing::TestFooter(spec));
}

// 300 files, two of them with malformed statistics (a field the index's
// decode skips but walks): the index's error is the first one's, the full
// decode's error, naming the file and the field.
TEST(IndexOfParquetFiles, TheFirstCorruptFooterAmongManyIsTheErrorEvenInASkippedField) {
  const std::string good = FileWithStatistics(false), bad = FileWithStatistics(true);
  auto name = [](size_t i) { return "part-" + std::to_string(1000 + i) + ".parquet"; };
  std::vector<ListedFile> files;
  for (size_t i = 0; i < 300; ++i) files.push_back({name(i), good.size(), ""});
  const auto with_bad = [&](std::vector<ListedFile> listed, std::vector<size_t> bad_files) {
    for (size_t i : bad_files) listed[i].size = bad.size();
    return listed;
  };
  const auto read_with = [&](std::vector<size_t> bad_files) {
    return [&good, &bad, bad_files, name](const std::string& path, uint64_t offset, uint64_t size,
                                          std::string* out) {
      bool is_bad = false;
      for (size_t i : bad_files) is_bad = is_bad || path == name(i);
      const std::string& bytes = is_bad ? bad : good;
      out->assign(bytes, offset, size);
      return Status::Ok();
    };
  };
  auto index = IndexOfParquetFiles(files, read_with({}));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->shards.size(), 300u);
  EXPECT_EQ(index->shards[299].raw_data.basename, name(299));
  EXPECT_EQ(index->shards[299].samples, 5u);

  auto failed = IndexOfParquetFiles(with_bad(files, {211, 97}), read_with({211, 97}));
  ASSERT_FALSE(failed.ok());
  Result<FileFooter> full = ReadFooter(bad.size(), ReaderOf(bad), name(97));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(failed.status().ToString(), full.status().ToString());
  EXPECT_EQ(failed.status().message().rfind(name(97) + ": footer: FileMetaData field 4: ", 0), 0u)
      << failed.status().message();
  EXPECT_NE(failed.status().message().find("ColumnMetaData field 12: Statistics field 5: "),
            std::string::npos)
      << failed.status().message();
}

}  // namespace
}  // namespace sluice::parquet

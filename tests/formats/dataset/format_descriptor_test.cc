// The shard format registry: every format's properties, its agreement with
// the index layer's entry schema, the unknown-format errors (the texts the
// index parser, the serializers and the registry give), meta files,
// columns, readers and writers reached through the descriptors.
#include "formats/dataset/format_descriptor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/file.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/mds_shard_reader.h"
#include "formats/index/index.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

struct Expected {
  std::string_view name;
  EntryColumns columns;
  bool has_meta;
  bool has_separator;
  FieldForm fields;
};

constexpr Expected kExpected[] = {
    {"mds", EntryColumns::kListsWithSizes, false, false, FieldForm::kStoredBytes},
    {"json", EntryColumns::kObject, true, false, FieldForm::kJsonText},
    {"csv", EntryColumns::kLists, true, false, FieldForm::kPlainText},
    {"tsv", EntryColumns::kLists, true, false, FieldForm::kPlainText},
    {"xsv", EntryColumns::kLists, true, true, FieldForm::kPlainText},
};

TEST(FormatDescriptor, EveryFormatsProperties) {
  // Mosaic's five, then "raw" (RawFileIsAListedFormatWithoutWriter) and
  // "parquet" (parquet_dataset_test.cc).
  ASSERT_EQ(ShardFormats().size(), std::size(kExpected) + 2);
  for (size_t i = 0; i < std::size(kExpected); ++i) {
    const Expected& want = kExpected[i];
    SCOPED_TRACE(want.name);
    const ShardFormatDescriptor& f = ShardFormats()[i];
    EXPECT_EQ(f.name, want.name);
    EXPECT_EQ(FindShardFormat(want.name), &f);
    EXPECT_EQ(f.index_source, IndexSource::kIndexJson);
    ASSERT_NE(f.entry_schema, nullptr);
    EXPECT_EQ(f.entry_schema, FindIndexEntrySchema(want.name));
    EXPECT_EQ(f.entry_schema->format, want.name);
    EXPECT_EQ(f.entry_schema->columns, want.columns);
    EXPECT_EQ(f.entry_schema->has_meta, want.has_meta);
    EXPECT_EQ(f.entry_schema->has_separator, want.has_separator);
    EXPECT_EQ(f.has_meta(), want.has_meta);
    EXPECT_EQ(f.fields, want.fields);
    EXPECT_NE(f.columns, nullptr);
    EXPECT_NE(f.open_reader, nullptr);
    EXPECT_NE(f.open_writer, nullptr);
  }
}

// Raw files: indexed from a listing, one "data" column of bytes, no writer.
TEST(FormatDescriptor, RawFileIsAListedFormatWithoutWriter) {
  const ShardFormatDescriptor* f = FindShardFormat("raw");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f, &ShardFormats()[5]);
  EXPECT_EQ(f->index_source, IndexSource::kFileListing);
  EXPECT_EQ(f->entry_schema, nullptr);
  EXPECT_FALSE(f->has_meta());
  EXPECT_EQ(f->fields, FieldForm::kStoredBytes);
  EXPECT_EQ(f->open_writer, nullptr);

  ShardEntry e;
  e.format = "raw";
  e.samples = 1;
  e.raw_data = FileInfo{"cats/0001.jpg", 5, {}};
  std::vector<std::string> names, encodings;
  ASSERT_TRUE(ColumnsOf(e, {}, &names, &encodings).ok());
  EXPECT_EQ(names, std::vector<std::string>{"data"});
  EXPECT_EQ(encodings, std::vector<std::string>{"bytes"});
  EXPECT_EQ(MetaFileOf(e), nullptr);

  auto view = ShardView::Open(e, "JFIF!", "");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  SampleFields out;
  ASSERT_TRUE(view->Read(0, names, &out).ok());
  EXPECT_EQ(out.raw, "JFIF!");
  ASSERT_EQ(out.fields.size(), 1u);
  EXPECT_EQ(out.fields[0], "JFIF!");
  EXPECT_EQ(view->Read(1, names, &out).message(),
            "cats/0001.jpg: sample 1 of a raw file, which holds sample 0 only");
  EXPECT_EQ(ShardView::Open(e, "JFIF", "").status().message(),
            "cats/0001.jpg: has 4 bytes, the listing says 5");
  e.samples = 2;
  EXPECT_EQ(ShardView::Open(e, "JFIF!", "").status().message(),
            "cats/0001.jpg: a raw file is one sample, its entry says 2");
}

// The index layer's rows and the descriptors are one list: no row without a
// descriptor, no index.json descriptor without its row.
TEST(FormatDescriptor, EntrySchemasAndDescriptorsAgree) {
  for (const IndexEntrySchema& s : kIndexEntrySchemas) {
    const ShardFormatDescriptor* f = FindShardFormat(s.format);
    ASSERT_NE(f, nullptr) << s.format;
    EXPECT_EQ(f->entry_schema, &s);
  }
  for (const ShardFormatDescriptor& f : ShardFormats()) {
    EXPECT_EQ(f.index_source == IndexSource::kIndexJson, f.entry_schema != nullptr) << f.name;
  }
}

ShardEntry Entry(std::string format) {
  ShardEntry e;
  e.format = std::move(format);
  e.raw_data.basename = "shard.00000." + e.format;
  return e;
}

TEST(FormatDescriptor, UnknownFormat) {
  EXPECT_EQ(FindShardFormat("orc"), nullptr);
  EXPECT_EQ(FindShardFormat(""), nullptr);
  EXPECT_EQ(FindShardFormat("MDS"), nullptr);
  EXPECT_EQ(FindIndexEntrySchema("parquet"), nullptr);

  Result<const ShardFormatDescriptor*> f = ShardFormatOf(Entry("orc"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(f.status().message(), "unknown shard format 'orc'");

  // What the index layer says of a format that no index.json holds (Parquet's
  // index is built from footers), as before the registry.
  const std::string index =
      R"({"shards": [{"format": "parquet", "version": 2}], "version": 2})";
  Result<Index> parsed = ParseIndex(index, "data/index.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(parsed.status().message(),
            "data/index.json: shard 0: field 'format': unknown shard format 'parquet'");
  Result<std::string> written = SerializeShardEntry(Entry("parquet"));
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(written.status().message(), "shard entry (format 'parquet'): unknown format");

  std::vector<std::string> names{"stale"}, encodings{"stale"};
  Status st = ColumnsOf(Entry("orc"), {}, &names, &encodings);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "unknown shard format 'orc'");
  EXPECT_TRUE(names.empty());

  Result<ShardView> view = ShardView::Open(Entry("orc"), "", "");
  EXPECT_EQ(view.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(MetaFileOf(Entry("orc")), nullptr);
  EXPECT_EQ(RequiredMetaFileOf(Entry("orc"), "x/index.json").status().code(),
            StatusCode::kUnimplemented);
}

TEST(FormatDescriptor, MetaFiles) {
  ShardEntry mds = Entry("mds");
  EXPECT_EQ(MetaFileOf(mds), nullptr);
  ASSERT_TRUE(RequiredMetaFileOf(mds, "d/index.json").ok());
  EXPECT_EQ(*RequiredMetaFileOf(mds, "d/index.json"), nullptr);

  ShardEntry json = Entry("json");
  EXPECT_EQ(MetaFileOf(json), nullptr);
  Result<const FileInfo*> missing = RequiredMetaFileOf(json, "d/index.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(missing.status().message(),
            "d/index.json: shard 'shard.00000.json' of format json has no raw_meta");
  json.raw_meta = FileInfo{"shard.00000.json.meta", 12, {}};
  EXPECT_EQ(MetaFileOf(json), &*json.raw_meta);
  EXPECT_EQ(*RequiredMetaFileOf(json, "d/index.json"), &*json.raw_meta);
}

TEST(FormatDescriptor, Columns) {
  std::vector<std::string> names, encodings;
  ShardEntry mds = Entry("mds");
  mds.column_names = {"a", "b"};
  mds.column_encodings = {"int", "bytes"};
  ASSERT_TRUE(ColumnsOf(mds, {}, &names, &encodings).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(encodings, (std::vector<std::string>{"int", "bytes"}));

  ShardEntry json = Entry("json");
  json.columns = {{"id", "int"}, {"x", "float"}};
  ASSERT_TRUE(ColumnsOf(json, {}, &names, &encodings).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"id", "x"}));
  EXPECT_EQ(encodings, (std::vector<std::string>{"int", "float"}));

  ShardEntry csv = Entry("csv");
  csv.column_names = {"s"};
  csv.column_encodings = {"str"};
  ASSERT_TRUE(ColumnsOf(csv, {}, &names, &encodings).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"s"}));
  EXPECT_EQ(encodings, (std::vector<std::string>{"str"}));
}

FieldWriterOptions WithNewline() {
  FieldWriterOptions o;
  o.newline = "\n";
  return o;
}

TEST(FormatDescriptor, WriterOptionsEachFormatRefuses) {
  testing::TempDir tmp;
  const std::vector<std::pair<std::string, std::string>> cols{{"id", "int"}};
  auto mds = FindShardFormat("mds")->open_writer(tmp.path() + "/m", cols, WithNewline());
  EXPECT_EQ(mds.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mds.status().message(), "format 'mds' takes no newline or separator");
  FieldWriterOptions sep;
  sep.separator = "|";
  auto json = FindShardFormat("json")->open_writer(tmp.path() + "/j", cols, sep);
  EXPECT_EQ(json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(json.status().message(), "format 'json' takes no separator");
  sep.separator = ",";
  auto tsv = FindShardFormat("tsv")->open_writer(tmp.path() + "/t", cols, sep);
  EXPECT_EQ(tsv.status().message(), "format 'tsv' has a fixed separator; use format 'xsv' for another");
}

// Every format writes through its descriptor and reads back through
// DatasetReader, whose shards open through the same descriptor.
TEST(FormatDescriptor, WritesAndReadsBackEveryFormat) {
  for (const ShardFormatDescriptor& f : ShardFormats()) {
    if (f.open_writer == nullptr) continue;  // read only: raw files, Parquet
    SCOPED_TRACE(f.name);
    testing::TempDir tmp;
    const std::string dir = tmp.path() + "/ds";
    const bool text = f.fields != FieldForm::kStoredBytes;
    std::vector<std::pair<std::string, std::string>> cols{{"name", "str"},
                                                          {"id", text ? "int" : "bytes"}};
    FieldWriterOptions o;
    if (f.entry_schema->has_separator) o.separator = "|";
    auto w = f.open_writer(dir, cols, o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    FieldWriter& writer = **w;
    EXPECT_EQ(writer.column_names(), (std::vector<std::string>{"id", "name"}));
    if (text) {
      // JSONL's int also takes a bool, as Mosaic's JSONWriter does.
      const bool json = std::string(f.name) == "json";
      Status bad = writer.Set(0, "12x");
      EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(bad.message(), std::string("column 'id' (int): '12x' is not an int (at most 4300 "
                                           "digits)") + (json ? " nor true/false" : ""));
      EXPECT_EQ(writer.Set(0, "true").ok(), json);
    }
    ASSERT_TRUE(writer.Set(0, "7").ok());
    ASSERT_TRUE(writer.Set(1, "seven").ok());
    ASSERT_TRUE(writer.Write().ok());
    ASSERT_TRUE(writer.Finish().ok());
    ASSERT_EQ(writer.core().shards().size(), 1u);
    EXPECT_EQ(writer.core().shards()[0].format, f.name);

    auto r = DatasetReader::Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->column_names(), (std::vector<std::string>{"id", "name"}));
    SampleFields fields;
    ASSERT_TRUE((*r)->Read(0, &fields).ok());
    ASSERT_EQ(fields.fields.size(), 2u);
    EXPECT_EQ(fields.fields[0], "7");
    EXPECT_EQ(fields.fields[1], f.fields == FieldForm::kJsonText ? "\"seven\"" : "seven");
  }
}

// Only MDS locates a sample from its data file alone: the split formats keep
// their offsets in the meta file, a raw file is its one sample.
TEST(FormatDescriptor, OnlyMdsPeeksASampleFromItsDataFile) {
  for (const ShardFormatDescriptor& f : ShardFormats()) {
    SCOPED_TRACE(f.name);
    EXPECT_EQ(f.peek != nullptr, f.name == "mds");
  }
  const SamplePeekHooks& mds = *FindShardFormat("mds")->peek;
  // Sample i's offsets entry: offsets[i] and offsets[i + 1], after the count.
  EXPECT_EQ(mds.bounds_at(0), (DataSpan{4, 8}));
  EXPECT_EQ(mds.bounds_at(7), (DataSpan{32, 8}));
  EXPECT_EQ(mds.bounds_at(0xffffffffu), (DataSpan{4 + 4 * uint64_t{0xffffffffu}, 8}));
}

// Only Parquet's open decodes its rows (pages, dictionaries, levels): the
// engine's prefetch hold asks this and no format name.
TEST(FormatDescriptor, OnlyParquetsOpenDecodes) {
  for (const ShardFormatDescriptor& f : ShardFormats()) {
    SCOPED_TRACE(f.name);
    EXPECT_EQ(f.open_decodes, f.name == "parquet");
  }
}

// The guess of where sample i lies, before its bounds are read: i average
// samples past the offsets table (the average: the file's bytes after the
// table over its samples, rounded down).
TEST(FormatDescriptor, MdsPeekGuessesASampleAtItsAveragePlace) {
  const SamplePeekHooks& mds = *FindShardFormat("mds")->peek;
  ShardEntry entry = Entry("mds");
  entry.samples = 3;  // offsets table ends at 4 + 4 * 4 = 20
  entry.raw_data.bytes = 100;  // 80 bytes of samples: 26 a sample
  EXPECT_EQ(mds.likely_span(entry, 0), (DataSpan{20, 26}));
  EXPECT_EQ(mds.likely_span(entry, 2), (DataSpan{72, 26}));
  // A file too small for its table: an empty sample at the table's end.
  entry.raw_data.bytes = 20;
  EXPECT_EQ(mds.likely_span(entry, 1), (DataSpan{20, 0}));
  entry.samples = 0;
  EXPECT_EQ(mds.likely_span(entry, 0), (DataSpan{8, 0}));
}

// Writes three samples of columns ("id" int, "name" str) in one MDS shard
// under `dir` and returns its entry.
ShardEntry WriteThreeMdsSamples(const std::string& dir) {
  auto w = FindShardFormat("mds")->open_writer(dir, {{"name", "str"}, {"id", "int"}}, {});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  const std::string ids[] = {std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8),
                             std::string("\x02\x00\x00\x00\x00\x00\x00\x00", 8),
                             std::string("\x03\x00\x00\x00\x00\x00\x00\x00", 8)};
  const std::string names[] = {"a", "bb", "ccc"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE((*w)->Set(0, ids[i]).ok());
    EXPECT_TRUE((*w)->Set(1, names[i]).ok());
    EXPECT_TRUE((*w)->Write().ok());
  }
  EXPECT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->core().shards().size(), 1u);
  return (*w)->core().shards()[0];
}

// The peek hooks read a sample as the shard's reader does: the span its
// offsets entry gives, split into the same fields.
TEST(FormatDescriptor, MdsPeekFindsAndSplitsASampleAsTheReaderDoes) {
  testing::TempDir tmp;
  const ShardEntry entry = WriteThreeMdsSamples(tmp.path());
  ASSERT_EQ(entry.samples, 3u);
  auto file = ReadFile(tmp.path() + "/" + entry.raw_data.basename);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto cols = MdsColumnsFromEntry(entry, entry.raw_data.basename);
  ASSERT_TRUE(cols.ok());
  auto reader = MdsShardReader::Open(*file, entry.raw_data.basename, *cols);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const SamplePeekHooks& peek = *FindShardFormat("mds")->peek;
  for (uint32_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const DataSpan at = peek.bounds_at(i);
    Result<DataSpan> span =
        peek.sample_span(entry, i, std::string_view(*file).substr(at.offset, at.length), "x");
    ASSERT_TRUE(span.ok()) << span.status().ToString();
    auto stored = reader->SampleBytes(i);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(span->offset, static_cast<uint64_t>(stored->data() - file->data()));
    EXPECT_EQ(span->length, stored->size());

    const std::string sample = file->substr(span->offset, span->length);
    std::vector<std::string_view> peeked, read;
    ASSERT_TRUE(peek.split_sample(entry, i, span->offset, sample, &peeked).ok());
    ASSERT_TRUE(reader->ReadSample(i, &read).ok());
    ASSERT_EQ(peeked.size(), 2u);
    EXPECT_EQ(peeked[0], read[0]);
    EXPECT_EQ(peeked[1], read[1]);
    EXPECT_EQ(peeked[1], std::string(i + 1, static_cast<char>('a' + i)));
    EXPECT_GE(peeked[0].data(), sample.data());  // views into the peeked bytes
    EXPECT_LE(peeked[1].data() + peeked[1].size(), sample.data() + sample.size());
  }
}

std::string Bounds(uint32_t begin, uint32_t end) {
  std::string b(8, '\0');
  for (int k = 0; k < 4; ++k) {
    b[k] = static_cast<char>((begin >> (8 * k)) & 0xff);
    b[4 + k] = static_cast<char>((end >> (8 * k)) & 0xff);
  }
  return b;
}

// Bounds are checked against the entry before anything is sized by them.
TEST(FormatDescriptor, MdsPeekRefusesBoundsThatDoNotFitTheEntry) {
  ShardEntry entry = Entry("mds");
  entry.samples = 3;  // offsets table ends at 4 + 4 * 4 = 20
  entry.raw_data.bytes = 100;
  const SamplePeekHooks& peek = *FindShardFormat("mds")->peek;
  EXPECT_EQ(*peek.sample_span(entry, 1, Bounds(20, 100), "w"), (DataSpan{20, 80}));
  EXPECT_EQ(*peek.sample_span(entry, 1, Bounds(30, 30), "w"), (DataSpan{30, 0}));

  Result<DataSpan> short_read = peek.sample_span(entry, 1, Bounds(20, 30).substr(0, 7), "w");
  EXPECT_EQ(short_read.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(short_read.status().message(), "w: offsets entry at 8: got 7 bytes, expected 8");
  const char* expected_tail =
      ", expected ordered, from 20 (the offsets table's end) up to 100 (the shard's size)";
  Result<DataSpan> in_table = peek.sample_span(entry, 2, Bounds(19, 30), "w");
  EXPECT_EQ(in_table.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(in_table.status().message(), std::string("w: offsets 19..30 at 12") + expected_tail);
  Result<DataSpan> reversed = peek.sample_span(entry, 0, Bounds(40, 39), "w");
  EXPECT_EQ(reversed.status().message(), std::string("w: offsets 40..39 at 4") + expected_tail);
  Result<DataSpan> past_end = peek.sample_span(entry, 0, Bounds(40, 101), "w");
  EXPECT_EQ(past_end.status().message(), std::string("w: offsets 40..101 at 4") + expected_tail);
}

}  // namespace
}  // namespace sluice

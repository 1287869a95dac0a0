// The shard format registry: every format's properties, its agreement with
// the index layer's entry schema, the unknown-format errors (the texts the
// index parser, the serializers and the registry give), meta files,
// columns, readers and writers reached through the descriptors.
#include "formats/dataset/format_descriptor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/dataset/dataset_reader.h"
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

}  // namespace
}  // namespace sluice

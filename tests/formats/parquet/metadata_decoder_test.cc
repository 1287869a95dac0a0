// FileMetaData and PageHeader decoding on hand-made footers: every field the
// model holds, unknown fields skipped, and each strictness rule's error.
#include "formats/parquet/metadata_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/file.h"
#include "tests/formats/parquet/thrift_test_writer.h"

namespace sluice::parquet {
namespace {

using testing::ThriftWriter;

constexpr uint8_t kI32 = 5, kStruct = 12, kBinary = 8;

void Element(ThriftWriter& w, const char* name, int repetition, int type = -1,
             int children = -1) {
  w.BeginStruct();
  if (type >= 0) w.I32(1, type);
  if (repetition >= 0) w.I32(3, repetition);
  w.Binary(4, name);
  if (children >= 0) w.I32(5, children);
}

// A footer with a root, a timestamp leaf, a decimal leaf, an INTEGER leaf and
// a string leaf; one row group of one column chunk with statistics.
std::string Footer() {
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 2);
  w.List(2, kStruct, 5);
  Element(w, "schema", -1, -1, 4);
  w.EndStruct();
  Element(w, "ts", 1, 2);
  w.Struct(10);  // LogicalType
  w.Struct(8);   // TIMESTAMP
  w.Bool(1, true);
  w.Struct(2);
  w.Struct(3);  // NANOS
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  Element(w, "price", 0, 7);
  w.I32(2, 5);       // type_length
  w.I32(6, 5);       // converted_type DECIMAL
  w.I32(7, 2);       // scale
  w.I32(8, 10);      // precision
  w.I32(9, 17);      // field_id
  w.Struct(10);
  w.Struct(5);
  w.I32(1, 2);
  w.I32(2, 10);
  w.EndStruct();
  w.EndStruct();
  w.I32(30, 99);  // an unknown field
  w.EndStruct();
  Element(w, "small", 2, 1);
  w.Struct(10);
  w.Struct(10);
  w.I8(1, 8);
  w.Bool(2, false);
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  Element(w, "text", 1, 6);
  w.I32(6, 0);
  w.Struct(10);
  w.Struct(1);
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  w.I64(3, 3);
  w.List(4, kStruct, 1);
  w.BeginStruct();  // RowGroup
  w.List(1, kStruct, 1);
  w.BeginStruct();  // ColumnChunk
  w.I64(2, 4);
  w.Struct(3);      // ColumnMetaData
  w.I32(1, 2);
  w.I32List(2, {0, 3, 8});
  w.StringList(3, {"ts"});
  w.I32(4, 6);
  w.I64(5, 3);
  w.I64(6, 100);
  w.I64(7, 80);
  w.I64(9, 40);
  w.I64(11, 4);
  w.Struct(12);
  w.I64(3, 1);
  w.Binary(5, "max!");
  w.Binary(6, "min");
  w.Bool(7, true);
  w.EndStruct();
  w.List(13, kStruct, 1);
  w.BeginStruct();
  w.I32(1, 2);
  w.I32(2, 0);
  w.I32(3, 1);
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  w.I64(2, 100);
  w.I64(3, 3);
  w.I16(7, 0);
  w.EndStruct();
  w.List(5, kStruct, 2);
  w.BeginStruct();
  w.Binary(1, "ARROW:schema");
  w.Binary(2, "....");
  w.EndStruct();
  w.BeginStruct();
  w.Binary(1, "no value");
  w.EndStruct();
  w.Binary(6, "parquet-cpp-arrow version 17.0.0");
  w.List(7, kStruct, 1);  // column_orders: skipped
  w.BeginStruct();
  w.Struct(1);
  w.EndStruct();
  w.EndStruct();
  w.EndStruct();
  return w.bytes;
}

TEST(MetadataDecoder, DecodesEveryField) {
  Result<FileMetaData> m = DecodeFileMetaData(Footer());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->version, 2);
  EXPECT_EQ(m->num_rows, 3);
  ASSERT_EQ(m->schema.size(), 5u);
  EXPECT_EQ(m->schema[0].name, "schema");
  EXPECT_EQ(m->schema[0].num_children, 4);
  EXPECT_FALSE(m->schema[0].repetition.has_value());
  const SchemaElement& ts = m->schema[1];
  EXPECT_EQ(ts.type, PhysicalType::kInt64);
  EXPECT_EQ(ts.repetition, Repetition::kOptional);
  EXPECT_EQ(LogicalTypeName(ts.logical_type), "TIMESTAMP(NANOS,UTC)");
  const SchemaElement& price = m->schema[2];
  EXPECT_EQ(price.type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(price.type_length, 5);
  EXPECT_EQ(price.converted_type, ConvertedType::kDecimal);
  EXPECT_EQ(price.scale, 2);
  EXPECT_EQ(price.precision, 10);
  EXPECT_EQ(price.field_id, 17);
  EXPECT_EQ(LogicalTypeName(price.logical_type), "DECIMAL(10,2)");
  EXPECT_EQ(LogicalTypeName(m->schema[3].logical_type), "INTEGER(8,unsigned)");
  EXPECT_EQ(m->schema[3].repetition, Repetition::kRepeated);
  EXPECT_EQ(LogicalTypeName(m->schema[4].logical_type), "STRING");
  EXPECT_EQ(m->schema[4].converted_type, ConvertedType::kUtf8);
  ASSERT_EQ(m->row_groups.size(), 1u);
  const RowGroup& rg = m->row_groups[0];
  EXPECT_EQ(rg.total_byte_size, 100);
  EXPECT_EQ(rg.num_rows, 3);
  EXPECT_EQ(rg.ordinal, 0);
  ASSERT_EQ(rg.columns.size(), 1u);
  EXPECT_EQ(rg.columns[0].file_offset, 4);
  ASSERT_TRUE(rg.columns[0].meta_data.has_value());
  const ColumnMetaData& c = *rg.columns[0].meta_data;
  EXPECT_EQ(c.type, PhysicalType::kInt64);
  EXPECT_EQ(c.encodings,
            (std::vector<Encoding>{Encoding::kPlain, Encoding::kRle, Encoding::kRleDictionary}));
  EXPECT_EQ(c.path_in_schema, std::vector<std::string>{"ts"});
  EXPECT_EQ(CompressionCodecName(c.codec), "ZSTD");
  EXPECT_EQ(c.num_values, 3);
  EXPECT_EQ(c.total_uncompressed_size, 100);
  EXPECT_EQ(c.total_compressed_size, 80);
  EXPECT_EQ(c.data_page_offset, 40);
  EXPECT_EQ(c.dictionary_page_offset, 4);
  ASSERT_TRUE(c.statistics.has_value());
  EXPECT_EQ(c.statistics->null_count, 1);
  EXPECT_EQ(c.statistics->max_value, "max!");
  EXPECT_EQ(c.statistics->min_value, "min");
  EXPECT_EQ(c.statistics->is_max_value_exact, true);
  EXPECT_FALSE(c.statistics->min.has_value());
  ASSERT_EQ(c.encoding_stats.size(), 1u);
  EXPECT_EQ(c.encoding_stats[0].page_type, PageType::kDictionaryPage);
  EXPECT_EQ(c.encoding_stats[0].encoding, Encoding::kPlain);
  EXPECT_EQ(c.encoding_stats[0].count, 1);
  ASSERT_EQ(m->key_value_metadata.size(), 2u);
  EXPECT_EQ(m->key_value_metadata[0].key, "ARROW:schema");
  EXPECT_EQ(m->key_value_metadata[0].value, "....");
  EXPECT_FALSE(m->key_value_metadata[1].value.has_value());
  EXPECT_EQ(m->created_by, "parquet-cpp-arrow version 17.0.0");
  EXPECT_FALSE(m->encrypted);
}

TEST(MetadataDecoder, TruncationAtEveryByteIsAnError) {
  const std::string f = Footer();
  for (size_t n = 0; n < f.size(); ++n) {
    Result<FileMetaData> m = DecodeFileMetaData(std::string_view(f).substr(0, n));
    ASSERT_FALSE(m.ok()) << n;
    EXPECT_TRUE(IsCorrupt(m.status())) << n;
  }
}

std::string FooterError(const std::string& bytes) {
  Result<FileMetaData> m = DecodeFileMetaData(bytes);
  return m.ok() ? "ok" : m.status().ToString();
}

TEST(MetadataDecoder, StrictnessErrors) {
  EXPECT_EQ(FooterError(Footer() + "x"), "corrupt: offset 248: 1 bytes after the FileMetaData");
  {
    ThriftWriter w;
    w.BeginStruct();
    w.I32(1, 1);
    w.List(2, kStruct, 0);
    w.I64(3, 0);
    w.EndStruct();
    EXPECT_EQ(FooterError(w.bytes),
              "corrupt: offset 7: FileMetaData: required field 4 (row_groups) missing");
  }
  {
    ThriftWriter w;
    w.BeginStruct();
    w.I64(3, -1);
    w.EndStruct();
    EXPECT_EQ(FooterError(w.bytes), "corrupt: FileMetaData field 3: offset 2: negative value -1");
  }
  {
    ThriftWriter w;  // a LogicalType with two members
    w.BeginStruct();
    w.List(2, kStruct, 1);
    w.BeginStruct();
    w.Binary(4, "x");
    w.Struct(10);
    w.Struct(1);
    w.EndStruct();
    w.Struct(2);
    w.EndStruct();
    w.EndStruct();
    w.EndStruct();
    w.EndStruct();
    EXPECT_EQ(FooterError(w.bytes),
              "corrupt: FileMetaData field 2: element 0: SchemaElement field 10: LogicalType "
              "field 2: offset 9: a LogicalType union with more than one member");
  }
  {
    ThriftWriter w;  // INTEGER bit width 12
    w.BeginStruct();
    w.List(2, kStruct, 1);
    w.BeginStruct();
    w.Struct(10);
    w.Struct(10);
    w.I8(1, 12);
    w.EndStruct();
    w.EndStruct();
    w.EndStruct();
    w.EndStruct();
    EXPECT_EQ(FooterError(w.bytes),
              "corrupt: FileMetaData field 2: element 0: SchemaElement field 10: LogicalType "
              "field 10: IntType field 1: offset 6: bitWidth 12 is not 8, 16, 32 or 64");
  }
  {
    ThriftWriter w;  // schema as a list of i32
    w.BeginStruct();
    w.I32List(2, {1});
    w.EndStruct();
    EXPECT_EQ(FooterError(w.bytes),
              "corrupt: FileMetaData field 2: offset 1: list of i32, expected a list of struct");
  }
  {
    ThriftWriter w;  // a future LogicalType member is kept by number
    w.BeginStruct();
    w.I32(1, 1);
    w.List(2, kStruct, 1);
    w.BeginStruct();
    w.Binary(4, "v");
    w.Struct(10);
    w.Struct(40);
    w.I32(1, 3);
    w.EndStruct();
    w.EndStruct();
    w.EndStruct();
    w.I64(3, 0);
    w.List(4, kStruct, 0);
    w.EndStruct();
    Result<FileMetaData> m = DecodeFileMetaData(w.bytes);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(LogicalTypeName(m->schema[0].logical_type), "LogicalType(40)");
  }
}

TEST(MetadataDecoder, MemoryIsBoundedByTheFooterSize) {
  // 100,000 schema elements of 3 bytes each (a name, empty) would take 112
  // bytes each in memory: refused once past 24 per byte of footer + 1 MiB.
  ThriftWriter w;
  w.BeginStruct();
  w.List(2, kStruct, 100000);
  for (int i = 0; i < 100000; ++i) {
    w.BeginStruct();
    w.Binary(4, "");
    w.EndStruct();
  }
  w.EndStruct();
  const std::string e = FooterError(w.bytes);
  EXPECT_NE(e.find("the decoded metadata would take more than " +
                   std::to_string(24 * w.bytes.size() + (1 << 20)) +
                   " bytes of memory (24 per byte of footer, and 1 MiB)"),
            std::string::npos)
      << e;
  // A column chunk without its metadata (one byte on the wire) is refused.
  ThriftWriter c;
  c.BeginStruct();
  c.List(4, kStruct, 1);
  c.BeginStruct();
  c.List(1, kStruct, 1);
  c.BeginStruct();
  c.EndStruct();
  c.EndStruct();
  c.EndStruct();
  EXPECT_EQ(FooterError(c.bytes),
            "corrupt: FileMetaData field 4: element 0: RowGroup field 1: element 0: offset 5: "
            "ColumnChunk: required field 3 (meta_data) missing");
}

TEST(MetadataDecoder, AListClaimingMoreThanTheBudgetIsTheErrorAtItsHeader) {
  // A row group whose columns list claims 20,000 chunks in a footer of
  // about 20 KB (the count fits the bytes left: each chunk could be one
  // byte). They would take 20,000 x sizeof(ColumnChunk) in memory, past
  // the budget of 24 per byte + 1 MiB: the list's header is the error,
  // charged before its room is reserved (so nothing near that is
  // allocated), not the first chunk's.
  constexpr int kCount = 20000;
  ASSERT_GT(uint64_t{kCount} * sizeof(ColumnChunk), 24u * (kCount + 64) + (1u << 20));
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 1);
  w.List(4, kStruct, 1);
  w.BeginStruct();
  w.List(1, kStruct, kCount);
  const size_t after_header = w.bytes.size();
  w.bytes.append(kCount, '\0');  // empty structs: a chunk without its metadata each
  w.EndStruct();
  w.EndStruct();
  EXPECT_EQ(FooterError(w.bytes),
            "corrupt: FileMetaData field 4: element 0: RowGroup field 1: offset " +
                std::to_string(after_header) + ": a list of " + std::to_string(kCount) +
                " elements: the decoded metadata would take more than " +
                std::to_string(24 * w.bytes.size() + (1 << 20)) +
                " bytes of memory (24 per byte of footer, and 1 MiB)");
  // Within the budget the same list is read, and its first chunk is the error.
  w = ThriftWriter();
  w.BeginStruct();
  w.I32(1, 1);
  w.List(4, kStruct, 1);
  w.BeginStruct();
  w.List(1, kStruct, 20);
  w.bytes.append(20, '\0');
  w.EndStruct();
  w.EndStruct();
  EXPECT_NE(FooterError(w.bytes).find("element 0: offset"), std::string::npos) << FooterError(w.bytes);
  EXPECT_NE(FooterError(w.bytes).find("ColumnChunk: required field 3 (meta_data) missing"),
            std::string::npos);
}

std::string DataPageV2Header(bool with_member) {
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 3);
  w.I32(2, 100);
  w.I32(3, 60);
  w.I32(4, -5);  // crc 0xfffffffb
  if (with_member) {
    w.Struct(8);
    w.I32(1, 10);
    w.I32(2, 2);
    w.I32(3, 7);
    w.I32(4, 8);
    w.I32(5, 4);
    w.I32(6, 0);
    w.Bool(7, false);
    w.EndStruct();
  }
  w.EndStruct();
  return w.bytes;
}

TEST(MetadataDecoder, PageHeaderV2) {
  const std::string h = DataPageV2Header(true);
  size_t size = 0;
  Result<PageHeader> p = DecodePageHeader(h + "page bytes", &size);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(size, h.size());
  EXPECT_EQ(p->type, PageType::kDataPageV2);
  EXPECT_EQ(p->uncompressed_page_size, 100);
  EXPECT_EQ(p->compressed_page_size, 60);
  EXPECT_EQ(p->crc, 0xfffffffbu);
  ASSERT_TRUE(p->data_page_header_v2.has_value());
  const DataPageHeaderV2& v2 = *p->data_page_header_v2;
  EXPECT_EQ(v2.num_values, 10);
  EXPECT_EQ(v2.num_nulls, 2);
  EXPECT_EQ(v2.num_rows, 7);
  EXPECT_EQ(v2.encoding, Encoding::kRleDictionary);
  EXPECT_EQ(v2.definition_levels_byte_length, 4);
  EXPECT_EQ(v2.repetition_levels_byte_length, 0);
  EXPECT_FALSE(v2.is_compressed);
  EXPECT_EQ(DecodePageHeader(DataPageV2Header(false), &size).status().ToString(),
            "corrupt: offset 10: PageHeader: a DATA_PAGE_V2 page without its header");
  for (size_t n = 0; n < h.size(); ++n) {
    EXPECT_FALSE(DecodePageHeader(std::string_view(h).substr(0, n), &size).ok()) << n;
  }
}

TEST(MetadataDecoder, Names) {
  EXPECT_EQ(EncodingName(Encoding::kByteStreamSplit), "BYTE_STREAM_SPLIT");
  EXPECT_EQ(EncodingName(static_cast<Encoding>(1)), "Encoding(1)");
  EXPECT_EQ(PhysicalTypeName(static_cast<PhysicalType>(-2)), "Type(-2)");
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kLz4Raw), "LZ4_RAW");
  EXPECT_EQ(ConvertedTypeName(ConvertedType::kTimestampMicros), "TIMESTAMP_MICROS");
  EXPECT_EQ(PageTypeName(PageType::kDictionaryPage), "DICTIONARY_PAGE");
}


// What the index's decode (kForIndex) sets, every field of it, as text.
std::string IndexFieldsOf(const FileMetaData& m) {
  std::string out = "v" + std::to_string(m.version) + " rows " + std::to_string(m.num_rows) +
                    (m.encrypted ? " encrypted" : "") + " kv " +
                    std::to_string(m.key_value_metadata.size()) +
                    (m.created_by ? " created_by" : "") + "\n";
  const auto opt = [](const auto& v) { return v ? std::to_string(static_cast<int64_t>(*v)) : "-"; };
  for (const SchemaElement& e : m.schema) {
    out += "  schema " + e.name + " " + opt(e.type) + " " + opt(e.type_length) + " " +
           opt(e.repetition) + " " + opt(e.num_children) + " " + opt(e.converted_type) + " " +
           opt(e.scale) + " " + opt(e.precision) + " " + opt(e.field_id) + " " +
           std::to_string(static_cast<int>(e.logical_type.kind)) + "\n";
  }
  for (const RowGroup& g : m.row_groups) {
    out += "  group " + std::to_string(g.total_byte_size) + " " + std::to_string(g.num_rows) +
           " " + opt(g.file_offset) + " " + opt(g.total_compressed_size) + " " + opt(g.ordinal) +
           "\n";
    for (const ColumnChunk& c : g.columns) {
      out += "    chunk " + c.file_path.value_or("-") + " " + std::to_string(c.file_offset) +
             (c.encrypted ? " encrypted" : "") + " " + opt(c.offset_index_offset) + " " +
             opt(c.column_index_length) + "\n";
      if (!c.meta_data) continue;
      const ColumnMetaData& d = *c.meta_data;
      out += "      meta " + std::to_string(static_cast<int>(d.type)) + " " +
             std::to_string(static_cast<int>(d.codec)) + " " + std::to_string(d.num_values) + " " +
             std::to_string(d.total_uncompressed_size) + " " +
             std::to_string(d.total_compressed_size) + " " + std::to_string(d.data_page_offset) +
             " " + opt(d.dictionary_page_offset) + " " + opt(d.index_page_offset) + " " +
             opt(d.bloom_filter_offset) + " " + opt(d.bloom_filter_length) + " enc " +
             std::to_string(d.encodings.size()) + " kv " +
             std::to_string(d.key_value_metadata.size()) + " stats " +
             (d.statistics ? "yes" : "no") + " encstats " +
             std::to_string(d.encoding_stats.size()) + " path";
      for (const std::string& p : d.path_in_schema) out += " [" + p + "]";
      out += "\n";
    }
  }
  return out;
}

// The serialized FileMetaData of a Parquet file in tests/data/parquet.
std::string FixtureFooter(const std::string& name) {
  auto file = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/" + name);
  EXPECT_TRUE(file.ok()) << name;
  if (!file.ok() || file->size() < 12) return {};
  uint32_t length = 0;
  std::memcpy(&length, file->data() + file->size() - 8, 4);
  return file->substr(file->size() - 8 - length, length);
}

TEST(MetadataDecoder, TheIndexsQuickWalkAnswersAsTheCheckedOnEveryDamagedByte) {
  // Real footers (pyarrow's, with statistics and schema metadata, of one
  // and of several row groups; DuckDB's) and the hand-made one above.
  std::vector<std::string> footers = {Footer()};
  for (const char* name :
       {"pa26_codec_none.parquet", "duckdb_default.parquet", "pa12_nulls_v2.parquet"}) {
    footers.push_back(FixtureFooter(name));
    ASSERT_GT(footers.back().size(), 100u) << name;
  }
  ThriftLimits tight;
  tight.max_depth = 6;
  tight.max_container_elements = 4;
  tight.max_binary_bytes = 40;
  // The checked walk alone (the error, or the fields), from a fresh value.
  const auto checked = [](std::string_view bytes, ThriftLimits limits) {
    FileMetaData m;
    const Status s =
        DecodeFileMetaDataCheckedInto(bytes, limits, MetadataFields::kForIndex, &m, nullptr);
    return s.ok() ? IndexFieldsOf(m) : s.ToString();
  };
  size_t cases = 0, faults = 0, kept = 0;
  for (const std::string& footer : footers) {
    std::vector<std::string> inputs;
    for (size_t n = 0; n <= footer.size(); ++n) inputs.push_back(footer.substr(0, n));
    for (size_t i = 0; i < footer.size(); ++i) {
      const auto b = static_cast<uint8_t>(footer[i]);
      for (int v : {0x00, 0x0c, 0x19, 0x80, 0xff, b + 1, b - 1, b ^ 0x10}) {
        std::string m = footer;
        m[i] = static_cast<char>(v);
        if (m != footer) inputs.push_back(m);
      }
    }
    for (const ThriftLimits& limits : {ThriftLimits{}, tight}) {
      // A decoding thread's value and schema kept from the undamaged footer.
      FileMetaData primed;
      SchemaReuse reuse;
      const Status first =
          DecodeFileMetaDataInto(footer, limits, MetadataFields::kForIndex, &primed, &reuse);
      for (const std::string& in : inputs) {
        const std::string want = checked(in, limits);
        const bool want_ok = want.rfind("corrupt:", 0) != 0;
        // The quick walk alone: true exactly when the checked walk is OK,
        // with the same fields.
        FileMetaData q;
        const bool quick = DecodeFileMetaDataForIndexQuick(in, limits, &q, nullptr);
        ASSERT_EQ(quick, want_ok) << ::testing::PrintToString(in) << "\n" << want;
        if (quick) {
          ASSERT_EQ(IndexFieldsOf(q), want);
        }
        // The decode (quick, then checked on a fault): the same answer,
        // fresh and into a value whose schema is kept.
        FileMetaData fresh;
        const Status s =
            DecodeFileMetaDataInto(in, limits, MetadataFields::kForIndex, &fresh, nullptr);
        ASSERT_EQ(s.ok() ? IndexFieldsOf(fresh) : s.ToString(), want);
        if (first.ok()) {
          FileMetaData again = primed;
          SchemaReuse r = reuse;
          const Status t =
              DecodeFileMetaDataInto(in, limits, MetadataFields::kForIndex, &again, &r);
          ASSERT_EQ(t.ok() ? IndexFieldsOf(again) : t.ToString(), want);
          kept += r.kept;
        }
        ++cases;
        faults += !want_ok;
      }
    }
  }
  // Both answers, many times over, and kept schemas among them.
  EXPECT_GT(cases, 100000u);
  EXPECT_GT(faults, 50000u);
  EXPECT_GT(cases - faults, 20000u);
  EXPECT_GT(kept, 20000u);
}

// The quick walk's skipped values (SkippedFields) kept from a footer read
// under the default limits are not taken for the same footer under limits
// that refuse them: its file's key/value metadata (a value of 492 bytes)
// past max_binary_bytes, or its chunks' encoding stats (a list of
// structs at depth 8) past max_depth, while its schema, read again under
// the new limits, passes.
TEST(MetadataDecoder, ValuesSkippedUnderOtherLimitsAreWalkedAgain) {
  const std::string footer = FixtureFooter("pa26_codec_none.parquet");
  ThriftLimits short_binaries;
  short_binaries.max_binary_bytes = 100;
  ThriftLimits shallow;
  shallow.max_depth = 7;
  for (const auto& [limits, want] :
       {std::pair{short_binaries,
                  std::string("corrupt: FileMetaData field 5: element 0: KeyValue field 2: offset "
                              "678: binary of 492 bytes, more than the limit of 100")},
        std::pair{shallow,
                  std::string("corrupt: FileMetaData field 4: element 0: RowGroup field 1: element "
                              "0: ColumnChunk field 3: ColumnMetaData field 13: element 0: offset "
                              "201: structs and containers nested deeper than 7")}}) {
    FileMetaData m;
    SchemaReuse reuse;
    ASSERT_TRUE(
        DecodeFileMetaDataInto(footer, {}, MetadataFields::kForIndex, &m, &reuse).ok());
    const Status s = DecodeFileMetaDataInto(footer, limits, MetadataFields::kForIndex, &m, &reuse);
    FileMetaData fresh;
    const Status t =
        DecodeFileMetaDataInto(footer, limits, MetadataFields::kForIndex, &fresh, nullptr);
    EXPECT_EQ(s.ToString(), t.ToString());
    EXPECT_EQ(s.ToString(), want);
  }
}

}  // namespace
}  // namespace sluice::parquet

#include "formats/text/xsv_shard_reader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/formats/text/text_test_data.h"

namespace sluice {
namespace {

using text_test::Bits;
using text_test::LoadData;
using text_test::LoadExpected;
using text_test::LoadIndex;
using text_test::LoadMeta;
using text_test::ReprToDouble;

void ExpectDatasetReads(const std::string& dataset, const std::string& separator) {
  Index index = LoadIndex(dataset);
  auto expected = LoadExpected(dataset);
  ASSERT_FALSE(index.shards.empty());
  size_t next = 0;
  simdjson::dom::parser parser;
  for (size_t s = 0; s < index.shards.size(); ++s) {
    const ShardEntry& entry = index.shards[s];
    std::string data = LoadData(dataset, entry), meta = LoadMeta(dataset, entry);
    auto reader = XsvShardReader::Open(entry, data, meta);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ASSERT_EQ(reader->size(), entry.samples);
    EXPECT_EQ(reader->separator(), separator);
    const auto& columns = reader->columns();
    ASSERT_EQ(columns.size(), 3u);
    for (uint32_t i = 0; i < reader->size(); ++i, ++next) {
      ASSERT_LT(next, expected.size());
      const auto& want = expected[next];
      ASSERT_EQ(want.sample, next);
      ASSERT_EQ(want.shard, s);
      ASSERT_EQ(want.index_in_shard, i);
      auto line = reader->Line(i);
      ASSERT_TRUE(line.ok());
      EXPECT_EQ(*line, want.line) << dataset << " sample " << next;
      auto values = reader->Sample(i);
      ASSERT_TRUE(values.ok()) << values.status().ToString();
      ASSERT_EQ(values->size(), columns.size());
      simdjson::dom::element doc = parser.parse(want.json);
      simdjson::dom::object fields = doc["fields"];
      ASSERT_EQ(fields.size(), columns.size());
      for (size_t c = 0; c < columns.size(); ++c) {
        simdjson::dom::element f = fields[columns[c].name];
        std::string where = dataset + " sample " + std::to_string(next) + " " + columns[c].name;
        EXPECT_EQ(std::string_view(f["encoding"]), TextEncodingName(columns[c].encoding))
            << where;
        const TextValue& v = (*values)[c];
        switch (columns[c].encoding) {
          case TextEncoding::kInt:
            ASSERT_TRUE(std::holds_alternative<int64_t>(v)) << where;
            EXPECT_EQ(std::get<int64_t>(v), int64_t(f["value"])) << where;
            break;
          case TextEncoding::kStr:
            ASSERT_TRUE(std::holds_alternative<std::string_view>(v)) << where;
            EXPECT_EQ(std::get<std::string_view>(v), std::string_view(f["value"])) << where;
            break;
          case TextEncoding::kFloat:
            ASSERT_TRUE(std::holds_alternative<double>(v)) << where;
            EXPECT_EQ(Bits(std::get<double>(v)),
                      Bits(ReprToDouble(std::string_view(f["value_repr"]))))
                << where;
            break;
        }
      }
    }
  }
  EXPECT_EQ(next, expected.size());
}

TEST(XsvShardReaderTest, CsvPlain) { ExpectDatasetReads("csv_plain", ","); }
TEST(XsvShardReaderTest, CsvBz2) { ExpectDatasetReads("csv_bz2", ","); }
TEST(XsvShardReaderTest, TsvPlain) { ExpectDatasetReads("tsv_plain", "\t"); }

// ---- bad input: a small hand-made shard, then one defect at a time ----

struct XsvFixture {
  ShardEntry entry;
  std::string data;
  std::string meta;
};

constexpr char kHeader[] = "id|;name|;score\r\n";  // 17 bytes

// An `xsv` shard with a two-byte separator and CRLF newlines.
XsvFixture GoodXsv(const std::string& second_line = "-2|;b|;nan\r\n") {
  XsvFixture f;
  f.entry.format = "xsv";
  f.entry.separator = "|;";
  f.entry.column_names = {"id", "name", "score"};
  f.entry.column_encodings = {"int", "str", "float"};
  f.entry.newline = "\r\n";
  f.entry.samples = 2;
  f.entry.raw_data.basename = "shard.00003.xsv";
  f.entry.raw_meta = FileInfo{"shard.00003.xsv.meta", 0, {}};
  f.entry.has_meta = true;
  std::string l0 = "1|;a b|;0.5\r\n";
  f.data = kHeader + l0 + second_line;
  AppendLE<uint32_t>(f.meta, 2);
  AppendLE<uint32_t>(f.meta, 17);
  AppendLE<uint32_t>(f.meta, static_cast<uint32_t>(17 + l0.size()));  // 30
  AppendLE<uint32_t>(f.meta, static_cast<uint32_t>(f.data.size()));
  f.meta += "{\"format\": \"xsv\"}";
  return f;
}

Status XsvOpenError(const XsvFixture& f) {
  return XsvShardReader::Open(f.entry, f.data, f.meta).status();
}

Status SampleError(const std::string& second_line) {
  XsvFixture f = GoodXsv(second_line);
  auto r = XsvShardReader::Open(f.entry, f.data, f.meta);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return r.status();
  return r->Sample(1).status();
}

TEST(XsvShardReaderBadInput, GoodFixtureReads) {
  XsvFixture f = GoodXsv(" +1_000 |;\xc3\xa9|;-Infinity\r\n");
  auto r = XsvShardReader::Open(f.entry, f.data, f.meta);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v0 = r->Sample(0);
  ASSERT_TRUE(v0.ok()) << v0.status().ToString();
  EXPECT_EQ(std::get<int64_t>((*v0)[0]), 1);
  EXPECT_EQ(std::get<std::string_view>((*v0)[1]), "a b");
  EXPECT_EQ(std::get<double>((*v0)[2]), 0.5);
  auto v1 = r->Sample(1);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(std::get<int64_t>((*v1)[0]), 1000);
  EXPECT_EQ(std::get<std::string_view>((*v1)[1]), "\xc3\xa9");
  EXPECT_EQ(std::get<double>((*v1)[2]), -INFINITY);
  // The str view points into the caller's data bytes.
  EXPECT_EQ(std::get<std::string_view>((*v1)[1]).data(), f.data.data() + 40);
}

TEST(XsvShardReaderBadInput, TruncatedMeta) {
  XsvFixture f = GoodXsv();
  f.meta.resize(12);
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv.meta: truncated meta file: 12 bytes, "
                          "expected at least 16 for 2 samples");
}

TEST(XsvShardReaderBadInput, FirstOffsetIsNotHeaderLength) {
  XsvFixture f = GoodXsv();
  uint32_t zero = 0;
  std::memcpy(f.meta.data() + 4, &zero, 4);
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv.meta: offsets[0] is 0, expected 17 for shard.00003.xsv");
}

TEST(XsvShardReaderBadInput, OffsetOutsideData) {
  XsvFixture f = GoodXsv();
  uint32_t past = 5000;
  std::memcpy(f.meta.data() + 12, &past, 4);
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv.meta: sample 1: end offset 5000 is past "
                          "the end of shard.00003.xsv (size 42)");
}

TEST(XsvShardReaderBadInput, WrongHeader) {
  XsvFixture f = GoodXsv();
  f.data[0] = 'I';
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv: header line at byte 0 is not the expected "
            "'69647c3b6e616d657c3b73636f72650d0a' (hex), found "
            "'49647c3b6e616d657c3b73636f72650d0a'");
}

TEST(XsvShardReaderBadInput, DataShorterThanHeader) {
  XsvFixture f = GoodXsv();
  f.data.resize(5);
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv: header line at byte 0 is not the expected "
            "'69647c3b6e616d657c3b73636f72650d0a' (hex), found '69647c3b6e'");
}

TEST(XsvShardReaderBadInput, XsvWithoutSeparator) {
  XsvFixture f = GoodXsv();
  f.entry.separator.reset();
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: xsv index entry has no separator");
}

TEST(XsvShardReaderBadInput, ColumnListsDiffer) {
  XsvFixture f = GoodXsv();
  f.entry.column_encodings.pop_back();
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv: index entry has 3 column_names but 2 column_encodings");
}

TEST(XsvShardReaderBadInput, TooFewFields) {
  Status st = SampleError("-2|;b\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 30: 2 fields, expected 3");
}

TEST(XsvShardReaderBadInput, TooManyFields) {
  Status st = SampleError("-2|;b|;1.0|;x\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 30: 4 fields, expected 3");
}

TEST(XsvShardReaderBadInput, NonIntegerInIntColumn) {
  Status st = SampleError("2.5|;b|;1.0\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 30: column 'id' expected an int "
                          "(at most 4300 digits), found '2.5'");
}

// Mosaic writes str(int) of any Python int and reads it back with int():
// beyond int64 the value comes as its canonical digits.
TEST(XsvShardReaderBadInput, IntsBeyondInt64ReadAsTheirDigits) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"9223372036854775808", "9223372036854775808"},
      {"-9223372036854775809", "-9223372036854775809"},
      {"1180591620717411303424", "1180591620717411303424"},
      {" +000_1180591620717411303424 ", "1180591620717411303424"},
      {"-" + std::string(4300, '9'), "-" + std::string(4300, '9')},
  };
  for (const auto& [field, digits] : cases) {
    XsvFixture f = GoodXsv(field + "|;b|;1.0\r\n");
    auto r = XsvShardReader::Open(f.entry, f.data, f.meta);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto v = r->Sample(1);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_TRUE(std::holds_alternative<TextBigInt>((*v)[0])) << field;
    EXPECT_EQ(std::get<TextBigInt>((*v)[0]).digits, digits);
  }
  // int64's own range stays int64.
  XsvFixture f = GoodXsv("-9223372036854775808|;b|;1.0\r\n");
  auto r = XsvShardReader::Open(f.entry, f.data, f.meta);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<int64_t>((*r->Sample(1))[0]), INT64_MIN);
}

TEST(XsvShardReaderBadInput, IntLongerThanPythonsLimit) {
  // CPython's int() refuses more than 4300 digits (leading zeros count).
  Status st = SampleError("0" + std::string(4300, '1') + "|;b|;1.0\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 30: column 'id' expected an int "
                          "(at most 4300 digits), found '0" + std::string(63, '1') +
                          "...' (4301 bytes)");
}

TEST(XsvShardReaderBadInput, NonFloatInFloatColumn) {
  Status st = SampleError("2|;b|;0x1p3\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv: sample 1 at byte 36: column 'score' expected a float, found '0x1p3'");
}

TEST(XsvShardReaderBadInput, LongFieldIsCutInTheMessage) {
  Status st = SampleError(std::string(100, '7') + "x|;b|;1.0\r\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 30: column 'id' expected an int "
                          "(at most 4300 digits), found '" + std::string(64, '7') +
                          "...' (101 bytes)");
}

TEST(XsvShardReaderBadInput, MissingNewline) {
  Status st = SampleError("2|;b|;1.0\n");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00003.xsv: sample 1 at byte 30: line does not end with the shard's newline");
}

TEST(XsvShardReaderBadInput, InvalidUtf8) {
  Status st = SampleError("2|;\xed\xa0\x80|;1.0\r\n");  // a UTF-16 surrogate
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00003.xsv: sample 1 at byte 33: invalid UTF-8");
}

TEST(XsvShardReaderBadInput, NotAnXsvFormat) {
  XsvFixture f = GoodXsv();
  f.entry.format = "json";
  Status st = XsvOpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "shard.00003.xsv: format 'json' is not a CSV/TSV/XSV shard");
}

}  // namespace
}  // namespace sluice

// Per-shard encoding: the samples of each compat shard, encoded with the
// same settings, give Mosaic's data and meta bytes exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "formats/text/jsonl_shard_encoder.h"
#include "formats/text/xsv_shard_reader.h"
#include "formats/text/xsv_shard_encoder.h"
#include "tests/formats/text/text_test_data.h"

namespace sluice {
namespace {

using text_test::LoadData;
using text_test::LoadExpected;
using text_test::LoadIndex;
using text_test::LoadMeta;
using text_test::ReprToDouble;

// Samples of expected.jsonl grouped by shard, as TextValues in sorted column
// order (id, name, score). `strings` keeps the str values alive.
struct ExpectedShards {
  std::vector<std::vector<std::vector<TextValue>>> by_shard;
  std::vector<std::unique_ptr<std::string>> strings;
};

ExpectedShards SamplesOf(const std::string& dataset, bool xsv) {
  ExpectedShards out;
  simdjson::dom::parser parser;
  for (const auto& s : LoadExpected(dataset)) {
    simdjson::dom::element doc = parser.parse(s.json);
    int64_t id;
    double score;
    std::string_view name;
    if (xsv) {
      id = int64_t(doc["fields"]["id"]["value"]);
      name = doc["fields"]["name"]["value"];
      score = ReprToDouble(std::string_view(doc["fields"]["score"]["value_repr"]));
    } else {
      id = int64_t(doc["value"]["id"]);
      name = doc["value"]["name"];
      score = double(doc["value"]["score"]);
    }
    out.strings.push_back(std::make_unique<std::string>(name));
    if (out.by_shard.size() <= s.shard) out.by_shard.resize(s.shard + 1);
    out.by_shard[s.shard].push_back({id, std::string_view(*out.strings.back()), score});
  }
  return out;
}

JsonlWriterOptions JsonlOptionsOf(const ShardEntry& e) {
  JsonlWriterOptions o;
  for (const auto& [name, enc] : e.columns) {
    o.columns.push_back({name, *ParseTextEncoding(enc, name)});
  }
  o.newline = *e.newline;
  o.compression = e.compression;
  o.hashes = e.hashes;
  o.size_limit = e.size_limit;
  return o;
}

XsvWriterOptions XsvOptionsOf(const ShardEntry& e) {
  XsvWriterOptions o;
  o.format = e.format;
  for (size_t c = 0; c < e.column_names.size(); ++c) {
    o.columns.push_back({e.column_names[c],
                         *ParseTextEncoding(e.column_encodings[c], e.column_names[c])});
  }
  o.newline = *e.newline;
  o.compression = e.compression;
  o.hashes = e.hashes;
  o.size_limit = e.size_limit;
  return o;
}

void ExpectShardsReencode(const std::string& dataset, bool xsv) {
  Index index = LoadIndex(dataset);
  ExpectedShards samples = SamplesOf(dataset, xsv);
  ASSERT_EQ(samples.by_shard.size(), index.shards.size());
  for (size_t s = 0; s < index.shards.size(); ++s) {
    const ShardEntry& e = index.shards[s];
    Result<SplitShardFiles> files = InternalError("unset");
    if (xsv) {
      XsvWriterOptions o = XsvOptionsOf(e);
      ASSERT_TRUE(ValidateXsvOptions(o).ok());
      files = EncodeXsvShard(o, samples.by_shard[s]);
    } else {
      JsonlWriterOptions o = JsonlOptionsOf(e);
      ASSERT_TRUE(ValidateJsonlOptions(o).ok());
      files = EncodeJsonlShard(o, samples.by_shard[s]);
    }
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    EXPECT_EQ(HexEncode(files->data), HexEncode(LoadData(dataset, e))) << dataset << " " << s;
    EXPECT_EQ(HexEncode(files->meta), HexEncode(LoadMeta(dataset, e))) << dataset << " " << s;
  }
}

TEST(TextShardEncodeTest, JsonPlain) { ExpectShardsReencode("json_plain", false); }
TEST(TextShardEncodeTest, JsonCrlfNewline) { ExpectShardsReencode("json_crlf_newline", false); }
TEST(TextShardEncodeTest, JsonZstdHashed) { ExpectShardsReencode("json_zstd_hashed", false); }
TEST(TextShardEncodeTest, CsvPlain) { ExpectShardsReencode("csv_plain", true); }
TEST(TextShardEncodeTest, CsvBz2) { ExpectShardsReencode("csv_bz2", true); }
TEST(TextShardEncodeTest, TsvPlain) { ExpectShardsReencode("tsv_plain", true); }

TEST(JsonlLineTest, SpecialFloatsAndEscapes) {
  std::vector<TextColumn> cols = {{"a", TextEncoding::kFloat}, {"b", TextEncoding::kFloat},
                                  {"c", TextEncoding::kFloat}, {"d", TextEncoding::kStr},
                                  {"\xc3\xa9", TextEncoding::kInt}};
  std::vector<TextValue> v = {NAN, -INFINITY, 1e16, std::string_view("q\"\n\xf0\x9f\x8e\x89"),
                              INT64_MIN};
  std::string line;
  ASSERT_TRUE(AppendJsonlLine(cols, v, "\r\n", line).ok());
  EXPECT_EQ(line,
            "{\"a\": NaN, \"b\": -Infinity, \"c\": 1e+16, \"d\": \"q\\\"\\n\\ud83c\\udf89\", "
            "\"\\u00e9\": -9223372036854775808}\r\n");
}

// What json.dumps(sort_keys=True) writes for Python ints beyond int64 and
// for bools in an int column (Mosaic's JSONWriter accepts both).
TEST(JsonlLineTest, BigIntsAndBoolsInIntColumns) {
  std::vector<TextColumn> cols = {{"a", TextEncoding::kInt}, {"b", TextEncoding::kInt},
                                  {"c", TextEncoding::kInt}};
  std::vector<TextValue> v = {TextBigInt{"-1180591620717411303424"}, TextBool{true},
                              TextBool{false}};
  std::string line;
  ASSERT_TRUE(AppendJsonlLine(cols, v, "\n", line).ok());
  EXPECT_EQ(line, "{\"a\": -1180591620717411303424, \"b\": true, \"c\": false}\n");
  // A bool is an int only: not a float or a str.
  std::vector<TextColumn> f = {{"x", TextEncoding::kFloat}};
  std::vector<TextValue> b = {TextBool{true}};
  line.clear();
  EXPECT_EQ(AppendJsonlLine(f, b, "\n", line).message(),
            "column 'x': expected a value of type float");
  EXPECT_EQ(line, "");
}

TEST(JsonlLineTest, RejectsWrongTypeAndBadUtf8) {
  std::vector<TextColumn> cols = {{"id", TextEncoding::kInt}, {"s", TextEncoding::kStr}};
  std::string line = "keep";
  std::vector<TextValue> wrong = {1.0, std::string_view("x")};
  Status st = AppendJsonlLine(cols, wrong, "\n", line);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "column 'id': expected a value of type int");
  EXPECT_EQ(line, "keep");
  std::vector<TextValue> bad = {int64_t{1}, std::string_view("\xff")};
  st = AppendJsonlLine(cols, bad, "\n", line);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message().rfind("column 's': ", 0), 0u) << st.message();
  EXPECT_EQ(line, "keep");
  std::vector<TextValue> short_sample = {int64_t{1}};
  st = AppendJsonlLine(cols, short_sample, "\n", line);
  EXPECT_EQ(st.message(), "sample has 1 values, expected 2");
}

TEST(JsonlOptionsTest, SortsAndChecksColumns) {
  JsonlWriterOptions o;
  o.columns = {{"b", TextEncoding::kStr}, {"a", TextEncoding::kInt}};
  ASSERT_TRUE(ValidateJsonlOptions(o).ok());
  EXPECT_EQ(o.columns[0].name, "a");
  o.columns.push_back({"a", TextEncoding::kFloat});
  EXPECT_EQ(ValidateJsonlOptions(o).message(), "duplicate column 'a'");
  o.columns.clear();
  EXPECT_EQ(ValidateJsonlOptions(o).message(), "no columns given");
  o.columns = {{"a", TextEncoding::kInt}};
  o.newline = "";
  EXPECT_EQ(ValidateJsonlOptions(o).message(), "newline must not be empty");
}

TEST(XsvLineTest, ValuesAsPythonStr) {
  XsvWriterOptions o;
  o.format = "xsv";
  o.separator = "::";
  o.columns = {{"z", TextEncoding::kStr}, {"f", TextEncoding::kFloat},
               {"g", TextEncoding::kFloat}, {"i", TextEncoding::kInt}};
  ASSERT_TRUE(ValidateXsvOptions(o).ok());
  EXPECT_EQ(XsvHeader(o), "f::g::i::z\n");
  std::vector<TextValue> v = {NAN, -INFINITY, int64_t{-5}, std::string_view("a:b \"c\"")};
  std::string line;
  ASSERT_TRUE(AppendXsvLine(o, v, line).ok());
  EXPECT_EQ(line, "nan::-inf::-5::a:b \"c\"\n");
}

// str(int) of Python ints beyond int64, as Mosaic's CSVWriter writes them;
// a bool is refused (Mosaic would write 'True', which int() cannot read).
TEST(XsvLineTest, BigIntsAsTheirDigitsAndNoBools) {
  XsvWriterOptions o;
  o.columns = {{"i", TextEncoding::kInt}, {"j", TextEncoding::kInt}};
  ASSERT_TRUE(ValidateXsvOptions(o).ok());
  std::vector<TextValue> v = {TextBigInt{"9223372036854775808"}, TextBigInt{"-" + std::string(4300, '9')}};
  std::string line;
  ASSERT_TRUE(AppendXsvLine(o, v, line).ok());
  EXPECT_EQ(line, "9223372036854775808,-" + std::string(4300, '9') + "\n");
  std::vector<TextValue> b = {TextBool{true}, int64_t{1}};
  line = "keep";
  EXPECT_EQ(AppendXsvLine(o, b, line).message(), "column 'i': expected a value of type int");
  EXPECT_EQ(line, "keep");
}

TEST(XsvLineTest, RejectsSeparatorNewlineTypeAndUtf8) {
  XsvWriterOptions o;
  o.columns = {{"s", TextEncoding::kStr}};
  ASSERT_TRUE(ValidateXsvOptions(o).ok());
  EXPECT_EQ(o.separator, ",");
  std::string line = "keep";
  auto one = [&](TextValue v) {
    std::vector<TextValue> vs = {v};
    return AppendXsvLine(o, vs, line);
  };
  EXPECT_EQ(one(std::string_view("a,b")).message(), "column 's': value contains the separator");
  EXPECT_EQ(one(std::string_view("a\nb")).message(), "column 's': value contains the newline");
  EXPECT_EQ(one(std::string_view("a\xc0")).message(), "column 's': invalid UTF-8 at byte 1");
  EXPECT_EQ(one(int64_t{3}).message(), "column 's': expected a value of type str");
  EXPECT_EQ(line, "keep");
  EXPECT_TRUE(one(std::string_view("a\rb")).ok());  // only the newline is reserved
}

TEST(XsvOptionsTest, Errors) {
  XsvWriterOptions o;
  o.columns = {{"a,b", TextEncoding::kStr}};
  EXPECT_EQ(ValidateXsvOptions(o).message(),
            "column name 'a,b' contains the separator or the newline");
  o.columns = {{"a", TextEncoding::kStr}};
  o.format = "tsv";
  o.separator = ",";
  EXPECT_EQ(ValidateXsvOptions(o).message(),
            "format 'tsv' has a fixed separator; use format 'xsv' for another");
  o.format = "xsv";
  o.separator = "";
  EXPECT_EQ(ValidateXsvOptions(o).message(), "format 'xsv' needs a non-empty separator");
  o.format = "psv";
  EXPECT_EQ(ValidateXsvOptions(o).message(),
            "unknown split text format 'psv' (expected csv, tsv or xsv)");
}

// An xsv shard written here reads back through the reader, separator and
// config included.
TEST(XsvRoundTripTest, XsvFormatWithSeparator) {
  XsvWriterOptions o;
  o.format = "xsv";
  o.separator = "|";
  o.newline = "\r\n";
  o.columns = {{"n", TextEncoding::kStr}, {"x", TextEncoding::kFloat}};
  ASSERT_TRUE(ValidateXsvOptions(o).ok());
  std::vector<std::vector<TextValue>> samples = {{std::string_view("a"), 0.1},
                                                 {std::string_view(""), -0.0}};
  auto files = EncodeXsvShard(o, samples);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->data, "n|x\r\na|0.1\r\n|-0.0\r\n");
  ShardEntry e = XsvConfigEntry(o);
  EXPECT_EQ(*e.separator, "|");
  e.samples = 2;
  e.raw_data.basename = "shard.00000.xsv";
  auto r = XsvShardReader::Open(e, files->data, files->meta);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v = r->Sample(1);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<std::string_view>((*v)[0]), "");
  EXPECT_TRUE(std::signbit(std::get<double>((*v)[1])));
  auto config = SerializeShardConfig(e);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(files->meta.substr(16), *config);
}

}  // namespace
}  // namespace sluice

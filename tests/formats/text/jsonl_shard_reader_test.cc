#include "formats/text/jsonl_shard_reader.h"

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

// Field by field: a parsed JsonValue against the simdjson oracle.
void ExpectSameJson(const JsonValue& got, simdjson::dom::element want,
                    const std::string& where) {
  using simdjson::dom::element_type;
  switch (want.type()) {
    case element_type::OBJECT: {
      const auto* obj = std::get_if<JsonValue::Object>(&got.v);
      ASSERT_NE(obj, nullptr) << where;
      simdjson::dom::object wobj = want;
      ASSERT_EQ(obj->size(), wobj.size()) << where;
      size_t k = 0;
      for (auto [key, value] : wobj) {
        EXPECT_EQ((*obj)[k].first, std::string(key)) << where;
        ExpectSameJson((*obj)[k].second, value, where + "." + std::string(key));
        ++k;
      }
      break;
    }
    case element_type::STRING: {
      const auto* s = std::get_if<std::string>(&got.v);
      ASSERT_NE(s, nullptr) << where;
      EXPECT_EQ(*s, std::string(std::string_view(want))) << where;
      break;
    }
    case element_type::INT64: {
      const auto* i = std::get_if<int64_t>(&got.v);
      ASSERT_NE(i, nullptr) << where;
      EXPECT_EQ(*i, int64_t(want)) << where;
      break;
    }
    case element_type::DOUBLE: {
      const auto* d = std::get_if<double>(&got.v);
      ASSERT_NE(d, nullptr) << where;
      EXPECT_EQ(Bits(*d), Bits(double(want))) << where << " " << *d;
      break;
    }
    default:
      FAIL() << where << ": unexpected oracle type";
  }
}

void ExpectDatasetReads(const std::string& dataset) {
  Index index = LoadIndex(dataset);
  auto expected = LoadExpected(dataset);
  ASSERT_FALSE(index.shards.empty());
  size_t next = 0;
  for (size_t s = 0; s < index.shards.size(); ++s) {
    const ShardEntry& entry = index.shards[s];
    std::string data = LoadData(dataset, entry), meta = LoadMeta(dataset, entry);
    auto reader = JsonlShardReader::Open(entry, data, meta);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ASSERT_EQ(reader->size(), entry.samples);
    ASSERT_EQ(reader->columns().size(), 3u);
    EXPECT_EQ(reader->columns()[0].name, "id");
    EXPECT_EQ(reader->columns()[0].encoding, TextEncoding::kInt);
    EXPECT_EQ(reader->columns()[1].encoding, TextEncoding::kStr);
    EXPECT_EQ(reader->columns()[2].encoding, TextEncoding::kFloat);
    for (uint32_t i = 0; i < reader->size(); ++i, ++next) {
      ASSERT_LT(next, expected.size());
      const auto& want = expected[next];
      ASSERT_EQ(want.sample, next);
      ASSERT_EQ(want.shard, s);
      ASSERT_EQ(want.index_in_shard, i);
      auto line = reader->Line(i);
      ASSERT_TRUE(line.ok());
      EXPECT_EQ(*line, want.line) << dataset << " sample " << next;
      auto value = reader->Sample(i);
      ASSERT_TRUE(value.ok()) << value.status().ToString();
      simdjson::dom::parser parser;
      simdjson::dom::element doc = parser.parse(want.json);
      ExpectSameJson(*value, doc["value"], dataset + " sample " + std::to_string(next));
    }
    EXPECT_EQ(reader->Line(reader->size()).status().code(), StatusCode::kOutOfRange);
  }
  EXPECT_EQ(next, expected.size());
}

TEST(JsonlShardReaderTest, JsonPlain) { ExpectDatasetReads("json_plain"); }
TEST(JsonlShardReaderTest, JsonCrlfNewline) { ExpectDatasetReads("json_crlf_newline"); }
TEST(JsonlShardReaderTest, JsonZstdHashed) { ExpectDatasetReads("json_zstd_hashed"); }

// ---- bad input: a small hand-made shard, then one defect at a time ----

struct Fixture {
  ShardEntry entry;
  std::string data;
  std::string meta;
};

Fixture Good() {
  Fixture f;
  f.entry.format = "json";
  f.entry.columns = {{"id", "int"}, {"name", "str"}, {"score", "float"}};
  f.entry.newline = "\n";
  f.entry.samples = 2;
  f.entry.raw_data.basename = "shard.00007.json";
  f.entry.raw_meta = FileInfo{"shard.00007.json.meta", 0, {}};
  f.entry.has_meta = true;
  std::string l0 = "{\"id\": 1, \"name\": \"a\", \"score\": 0.5}\n";
  std::string l1 = "{\"id\": 2, \"name\": \"b\", \"score\": NaN}\n";
  f.data = l0 + l1;
  AppendLE<uint32_t>(f.meta, 2);
  AppendLE<uint32_t>(f.meta, 0);
  AppendLE<uint32_t>(f.meta, static_cast<uint32_t>(l0.size()));
  AppendLE<uint32_t>(f.meta, static_cast<uint32_t>(f.data.size()));
  f.meta += "{\"format\": \"json\"}";
  return f;
}

// Replaces sample 1's line (keeping the meta consistent).
Fixture WithSecondLine(const std::string& line) {
  Fixture f = Good();
  uint32_t first = LoadLE<uint32_t>(f.meta.data() + 8);
  f.data = f.data.substr(0, first) + line;
  uint32_t end = static_cast<uint32_t>(f.data.size());
  std::memcpy(f.meta.data() + 12, &end, 4);
  return f;
}

Status OpenError(const Fixture& f) {
  return JsonlShardReader::Open(f.entry, f.data, f.meta).status();
}

Status SampleError(const Fixture& f, uint32_t i) {
  auto r = JsonlShardReader::Open(f.entry, f.data, f.meta);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return r.status();
  return r->Sample(i).status();
}

TEST(JsonlShardReaderBadInput, GoodFixtureReads) {
  Fixture f = Good();
  auto r = JsonlShardReader::Open(f.entry, f.data, f.meta);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v = r->Sample(1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const auto& obj = std::get<JsonValue::Object>(v->v);
  EXPECT_EQ(std::get<int64_t>(obj[0].second.v), 2);
  EXPECT_TRUE(std::isnan(std::get<double>(obj[2].second.v)));
}

TEST(JsonlShardReaderBadInput, TruncatedMetaCount) {
  Fixture f = Good();
  f.meta.resize(3);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: truncated meta file: 3 bytes, "
                          "expected at least 4 for the sample count");
}

TEST(JsonlShardReaderBadInput, TruncatedMetaOffsets) {
  Fixture f = Good();
  f.meta.resize(10);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: truncated meta file: 10 bytes, "
                          "expected at least 16 for 2 samples");
}

TEST(JsonlShardReaderBadInput, AbsurdSampleCountDoesNotAllocate) {
  Fixture f = Good();
  f.entry.samples = 0xFFFFFFFFu;
  uint32_t n = 0xFFFFFFFFu;
  std::memcpy(f.meta.data(), &n, 4);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: truncated meta file: 34 bytes, "
                          "expected at least 17179869188 for 4294967295 samples");
}

TEST(JsonlShardReaderBadInput, SampleCountDiffersFromIndex) {
  Fixture f = Good();
  f.entry.samples = 3;
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00007.json.meta: meta file holds 2 samples, index entry says 3");
}

TEST(JsonlShardReaderBadInput, OffsetOutsideData) {
  Fixture f = Good();
  uint32_t past = 1000;
  std::memcpy(f.meta.data() + 8, &past, 4);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: sample 0: end offset 1000 is past "
                          "the end of shard.00007.json (size 74)");
}

TEST(JsonlShardReaderBadInput, TruncatedData) {
  Fixture f = Good();
  f.data.resize(f.data.size() - 1);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: sample 1: end offset 74 is past "
                          "the end of shard.00007.json (size 73)");
}

TEST(JsonlShardReaderBadInput, TrailingBytesAfterLastSample) {
  Fixture f = Good();
  f.data += "x";
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: last offset 74 does not match the "
                          "size of shard.00007.json (75)");
}

TEST(JsonlShardReaderBadInput, DecreasingOffsets) {
  Fixture f = Good();
  uint32_t back = 0;
  std::memcpy(f.meta.data() + 8, &back, 4);
  uint32_t mid = 40;
  std::memcpy(f.meta.data() + 8, &mid, 4);
  uint32_t before = 30;
  std::memcpy(f.meta.data() + 12, &before, 4);  // offsets[2] < offsets[1]
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json.meta: sample 1: offsets[2] = 30 is before "
                          "offsets[1] = 40");
}

TEST(JsonlShardReaderBadInput, FirstOffsetNotZero) {
  Fixture f = Good();
  uint32_t one = 1;
  std::memcpy(f.meta.data() + 4, &one, 4);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00007.json.meta: offsets[0] is 1, expected 0 for shard.00007.json");
}

TEST(JsonlShardReaderBadInput, ConfigNotJson) {
  Fixture f = Good();
  f.meta.resize(16);
  f.meta += "{\"format\": ";
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message().rfind("shard.00007.json.meta: config at byte 16 is not JSON: ", 0),
            0u) << st.message();
}

TEST(JsonlShardReaderBadInput, LineNotJson) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"b\", \"score\": }\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message().rfind("shard.00007.json: sample 1 at byte 37: line is not JSON: ", 0),
            0u) << st.message();
}

TEST(JsonlShardReaderBadInput, LineWithoutNewline) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"b\", \"score\": 1.5}"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "shard.00007.json: sample 1 at byte 37: line does not end with the shard's newline");
}

TEST(JsonlShardReaderBadInput, InvalidUtf8) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"\xff\", \"score\": 1.5}\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 56: invalid UTF-8");
}

TEST(JsonlShardReaderBadInput, NotAnObject) {
  Status st = SampleError(WithSecondLine("[1, \"b\", 1.5]\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: expected a JSON object");
}

TEST(JsonlShardReaderBadInput, MissingColumn) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"b\"}\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: object has 2 keys, "
                          "expected the 3 declared columns");
}

TEST(JsonlShardReaderBadInput, UndeclaredColumn) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"nam\": \"b\", \"score\": 1.5}\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: undeclared key 'nam'");
}

// As json.loads, the last of duplicate keys wins, so a column is missing.
TEST(JsonlShardReaderBadInput, DuplicateColumn) {
  Status st = SampleError(WithSecondLine("{\"id\": 2, \"id\": 3, \"score\": 1.5}\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: object has 2 keys, "
                          "expected the 3 declared columns");
}

TEST(JsonlShardReaderBadInput, WrongTypes) {
  Status st = SampleError(WithSecondLine("{\"id\": 2.0, \"name\": \"b\", \"score\": 1.5}\n"), 1);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: column 'id' expected int");
  st = SampleError(WithSecondLine("{\"id\": 2, \"name\": 7, \"score\": 1.5}\n"), 1);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: column 'name' expected str");
  st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"b\", \"score\": 1}\n"), 1);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: column 'score' expected float");
  st = SampleError(WithSecondLine("{\"id\": 2, \"name\": \"b\", \"score\": true}\n"), 1);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: column 'score' expected float");
  st = SampleError(WithSecondLine("{\"id\": null, \"name\": \"b\", \"score\": 1.0}\n"), 1);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 1 at byte 37: column 'id' expected int");
}

// Mosaic's JSONWriter takes a Python bool in an int column (bool is an int)
// and writes true/false; its reader gives the bool back.
TEST(JsonlShardReaderBadInput, BoolInIntColumnIsKept) {
  Fixture f = WithSecondLine("{\"id\": true, \"name\": \"b\", \"score\": 1.0}\n");
  auto r = JsonlShardReader::Open(f.entry, f.data, f.meta);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto v = r->Sample(1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const auto& obj = std::get<JsonValue::Object>(v->v);
  EXPECT_EQ(obj[0].first, "id");
  ASSERT_TRUE(std::holds_alternative<bool>(obj[0].second.v));
  EXPECT_TRUE(std::get<bool>(obj[0].second.v));
}

TEST(JsonlShardReaderBadInput, BigIntIsAnInt) {
  auto r = SampleError(WithSecondLine(
      "{\"id\": 123456789012345678901234567890, \"name\": \"b\", \"score\": 1.0}\n"), 1);
  EXPECT_TRUE(r.ok()) << r.ToString();
}

TEST(JsonlShardReaderBadInput, UnknownEncoding) {
  Fixture f = Good();
  f.entry.columns[1].second = "bytes";
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(),
            "column 'name': unknown text encoding 'bytes' (expected str, int or float)");
}

TEST(JsonlShardReaderBadInput, UnsortedColumns) {
  Fixture f = Good();
  std::swap(f.entry.columns[0], f.entry.columns[1]);
  Status st = OpenError(f);
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "shard.00007.json: column names are not sorted and unique "
                          "('name' then 'id')");
}

TEST(JsonlShardReaderBadInput, SampleOutOfRange) {
  Fixture f = Good();
  auto r = JsonlShardReader::Open(f.entry, f.data, f.meta);
  ASSERT_TRUE(r.ok());
  Status st = r->Sample(2).status();
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(), "shard.00007.json: sample 2 out of range (shard has 2)");
}

}  // namespace
}  // namespace sluice

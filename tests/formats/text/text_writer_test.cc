// The dataset writers: the compat samples written with the compat settings
// give Mosaic's folder: the same files, the same bytes (compressed files:
// the same bytes once decompressed) and the same index.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "formats/text/jsonl_shard_reader.h"
#include "formats/text/jsonl_writer.h"
#include "formats/text/xsv_shard_reader.h"
#include "formats/text/xsv_writer.h"
#include "tests/formats/text/text_test_data.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::TempDir;

using text_test::DatasetDir;
using text_test::LoadExpected;
using text_test::LoadIndex;
using text_test::ReprToDouble;

// (id, name, score) of every sample of expected.jsonl, in order.
struct Row {
  int64_t id;
  std::string name;
  double score;
};

std::vector<Row> RowsOf(const std::string& dataset, bool xsv) {
  std::vector<Row> rows;
  simdjson::dom::parser parser;
  for (const auto& s : LoadExpected(dataset)) {
    simdjson::dom::element doc = parser.parse(s.json);
    if (xsv) {
      rows.push_back({int64_t(doc["fields"]["id"]["value"]),
                      std::string(std::string_view(doc["fields"]["name"]["value"])),
                      ReprToDouble(std::string_view(doc["fields"]["score"]["value_repr"]))});
    } else {
      rows.push_back({int64_t(doc["value"]["id"]),
                      std::string(std::string_view(doc["value"]["name"])),
                      double(doc["value"]["score"])});
    }
  }
  return rows;
}

std::string Read(const std::string& path) {
  auto r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

std::string Unpack(const std::string& dir, const ShardEntry& e, const FileInfo& raw,
                   const std::optional<FileInfo>& zip) {
  if (!zip) return Read(JoinPath(dir, raw.basename));
  auto c = ParseCompression(*e.compression);
  EXPECT_TRUE(c.ok());
  auto out = Decompress(*c, Read(JoinPath(dir, zip->basename)), raw.bytes, zip->basename);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

void ExpectSameFileInfo(const FileInfo& got, const FileInfo& want, bool compare_content) {
  EXPECT_EQ(got.basename, want.basename);
  if (compare_content) {
    EXPECT_EQ(got.bytes, want.bytes) << want.basename;
    EXPECT_EQ(got.hashes, want.hashes) << want.basename;
  } else {
    // Compressed bytes depend on the library version; the algorithms do not.
    ASSERT_EQ(got.hashes.size(), want.hashes.size()) << want.basename;
    for (const auto& [algo, hex] : want.hashes) EXPECT_EQ(got.hashes.count(algo), 1u) << algo;
  }
}

// Writes `dataset`'s samples with its settings into a fresh folder and
// compares the result with the compat folder.
void ExpectWriterReproduces(const std::string& dataset, bool xsv) {
  Index want = LoadIndex(dataset);
  ASSERT_FALSE(want.shards.empty());
  const ShardEntry& first = want.shards[0];
  std::vector<Row> rows = RowsOf(dataset, xsv);
  TempDir tmp;
  if (xsv) {
    XsvWriterOptions o;
    o.format = first.format;
    if (first.separator) o.separator = *first.separator;
    // Declared out of order on purpose: the writer sorts the columns.
    o.columns = {{"score", TextEncoding::kFloat}, {"name", TextEncoding::kStr},
                 {"id", TextEncoding::kInt}};
    o.newline = *first.newline;
    o.compression = first.compression;
    o.hashes = first.hashes;
    o.size_limit = first.size_limit;
    auto w = XsvWriter::Create(tmp.path(), o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_EQ((*w)->columns()[0].name, "id");
    for (const Row& r : rows) {
      std::vector<TextValue> v = {r.id, std::string_view(r.name), r.score};
      ASSERT_TRUE((*w)->Write(v).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  } else {
    JsonlWriterOptions o;
    o.columns = {{"score", TextEncoding::kFloat}, {"name", TextEncoding::kStr},
                 {"id", TextEncoding::kInt}};
    o.newline = *first.newline;
    o.compression = first.compression;
    o.hashes = first.hashes;
    o.size_limit = first.size_limit;
    auto w = JsonlWriter::Create(tmp.path(), o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (const Row& r : rows) {
      std::vector<TextValue> v = {r.id, std::string_view(r.name), r.score};
      ASSERT_TRUE((*w)->Write(v).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
  }

  const std::string got_text = Read(tmp.path() + "/index.json");
  const std::string want_text = Read(DatasetDir(dataset) + "/index.json");
  auto got = ParseIndex(got_text, "written index.json");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->shards.size(), want.shards.size());
  const bool compressed = first.compression.has_value();
  for (size_t s = 0; s < want.shards.size(); ++s) {
    const ShardEntry& g = got->shards[s];
    const ShardEntry& e = want.shards[s];
    SCOPED_TRACE(dataset + " shard " + std::to_string(s));
    EXPECT_EQ(g.samples, e.samples);
    ExpectSameFileInfo(g.raw_data, e.raw_data, true);
    ASSERT_TRUE(g.raw_meta && e.raw_meta);
    ExpectSameFileInfo(*g.raw_meta, *e.raw_meta, true);
    ASSERT_EQ(g.zip_data.has_value(), e.zip_data.has_value());
    ASSERT_EQ(g.zip_meta.has_value(), e.zip_meta.has_value());
    if (compressed) {
      ExpectSameFileInfo(*g.zip_data, *e.zip_data, false);
      ExpectSameFileInfo(*g.zip_meta, *e.zip_meta, false);
      // Only the compressed files exist, as Mosaic leaves them.
      EXPECT_FALSE(FileExists(JoinPath(tmp.path(), g.raw_data.basename)));
      EXPECT_FALSE(FileExists(JoinPath(tmp.path(), g.raw_meta->basename)));
    }
    EXPECT_EQ(HexEncode(Unpack(tmp.path(), g, g.raw_data, g.zip_data)),
              HexEncode(Unpack(DatasetDir(dataset), e, e.raw_data, e.zip_data)));
    EXPECT_EQ(HexEncode(Unpack(tmp.path(), g, *g.raw_meta, g.zip_meta)),
              HexEncode(Unpack(DatasetDir(dataset), e, *e.raw_meta, e.zip_meta)));
  }
  if (!compressed) {
    EXPECT_EQ(got_text, want_text);
  } else {
    // Same text once the compressed files' sizes and digests are set to the
    // compat values.
    Index patched = *got;
    for (size_t s = 0; s < want.shards.size(); ++s) {
      patched.shards[s].zip_data = want.shards[s].zip_data;
      patched.shards[s].zip_meta = want.shards[s].zip_meta;
    }
    auto text = SerializeIndexSorted(patched);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, want_text);
  }
}

TEST(TextWriterTest, JsonPlain) { ExpectWriterReproduces("json_plain", false); }
TEST(TextWriterTest, JsonCrlfNewline) { ExpectWriterReproduces("json_crlf_newline", false); }
TEST(TextWriterTest, JsonZstdHashed) { ExpectWriterReproduces("json_zstd_hashed", false); }
TEST(TextWriterTest, CsvPlain) { ExpectWriterReproduces("csv_plain", true); }
TEST(TextWriterTest, CsvBz2) { ExpectWriterReproduces("csv_bz2", true); }
TEST(TextWriterTest, TsvPlain) { ExpectWriterReproduces("tsv_plain", true); }

TEST(TextWriterTest, BadValueWritesNothingAndNamesTheSample) {
  TempDir tmp;
  JsonlWriterOptions o;
  o.columns = {{"id", TextEncoding::kInt}};
  auto w = JsonlWriter::Create(tmp.path(), o);
  ASSERT_TRUE(w.ok());
  std::vector<TextValue> good = {int64_t{1}}, bad = {std::string_view("x")};
  ASSERT_TRUE((*w)->Write(good).ok());
  Status st = (*w)->Write(bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "sample 1: column 'id': expected a value of type int");
  ASSERT_TRUE((*w)->Write(good).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(Read(tmp.path() + "/shard.00000.json"), "{\"id\": 1}\n{\"id\": 1}\n");
}

TEST(TextWriterTest, OptionErrors) {
  TempDir tmp;
  XsvWriterOptions x;
  x.columns = {{"a", TextEncoding::kStr}};
  x.compression = "lz4";
  auto w = XsvWriter::Create(tmp.path(), x);
  ASSERT_FALSE(w.ok());
  x.compression.reset();
  x.size_limit = uint64_t{1} << 32;
  w = XsvWriter::Create(tmp.path(), x);
  EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
  JsonlWriterOptions j;
  auto jw = JsonlWriter::Create(tmp.path(), j);
  EXPECT_EQ(jw.status().message(), "no columns given");
}

// An XSV writer with a custom separator: format "xsv", `separator` in the
// config and the index, and a split that does not count the header: lines of
// 4 bytes under size_limit 8 give 2 per shard.
TEST(TextWriterTest, XsvSeparatorAndSplit) {
  TempDir tmp;
  XsvWriterOptions x;
  x.format = "xsv";
  x.separator = ";";
  x.columns = {{"longer_name_than_the_limit", TextEncoding::kInt}};
  x.size_limit = 8;
  auto w = XsvWriter::Create(tmp.path(), x);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int64_t i = 100; i < 105; ++i) {
    std::vector<TextValue> v = {i};
    ASSERT_TRUE((*w)->Write(v).ok());
  }
  ASSERT_TRUE((*w)->Finish().ok());
  auto index = ParseIndex(Read(tmp.path() + "/index.json"), "index.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->shards.size(), 3u);
  EXPECT_EQ(index->shards[0].samples, 2u);
  EXPECT_EQ(index->shards[2].samples, 1u);
  EXPECT_EQ(index->shards[1].raw_data.basename, "shard.00001.xsv");
  EXPECT_EQ(*index->shards[1].separator, ";");
  EXPECT_EQ(Read(tmp.path() + "/shard.00001.xsv"), "longer_name_than_the_limit\n102\n103\n");
  std::string meta = Read(tmp.path() + "/shard.00001.xsv.meta");
  EXPECT_EQ(HexEncode(meta.substr(0, 16)), "020000001b0000001f00000023000000");
  EXPECT_EQ(meta.substr(16),
            "{\"column_encodings\": [\"int\"], \"column_names\": "
            "[\"longer_name_than_the_limit\"], \"compression\": null, \"format\": \"xsv\", "
            "\"hashes\": [], \"newline\": \"\\n\", \"separator\": \";\", \"size_limit\": 8, "
            "\"version\": 2}");
  // And it reads back.
  // The reader keeps views: the data must outlive it.
  const std::string data = Read(tmp.path() + "/shard.00001.xsv");
  auto r = XsvShardReader::Open(index->shards[1], data, meta);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<int64_t>(*r->Sample(1).value().begin()), 103);
}

}  // namespace
}  // namespace sluice

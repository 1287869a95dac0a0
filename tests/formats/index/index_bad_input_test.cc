// Each kind of bad index.json gets a specific error that names the source
// file, the shard and the field.
#include <string>

#include <gtest/gtest.h>

#include "formats/index/index.h"

namespace sluice {
namespace {

constexpr char kSource[] = "data/index.json";

// One valid MDS entry; tests replace one piece of it.
const std::string kEntry =
    R"({"column_encodings": ["int", "str"], "column_names": ["id", "name"], )"
    R"("column_sizes": [8, null], "compression": null, "format": "mds", "hashes": [], )"
    R"("raw_data": {"basename": "shard.00000.mds", "bytes": 100, "hashes": {}}, )"
    R"("samples": 3, "size_limit": 65536, "version": 2, "zip_data": null})";

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

// An index of a valid entry and then the given one (shard 1).
std::string IndexWith(const std::string& entry) {
  return R"({"shards": [)" + kEntry + ", " + entry + R"(], "version": 2})";
}

Status ParseError(const std::string& text) {
  Result<Index> r = ParseIndex(text, kSource);
  EXPECT_FALSE(r.ok());
  return r.status();
}

TEST(IndexBadInput, ValidBaseParses) {
  Result<Index> r = ParseIndex(IndexWith(kEntry), kSource);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shards.size(), 2u);
}

TEST(IndexBadInput, MalformedJson) {
  Status st = ParseError(R"({"shards": [}, "version": 2})");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "data/index.json: malformed JSON: JSON at byte offset 12: expected a value");
}

TEST(IndexBadInput, TruncatedJson) {
  const std::string text = IndexWith(kEntry);
  Status st = ParseError(text.substr(0, 150));
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "data/index.json: malformed JSON: JSON at byte offset 150: unterminated string");
}

TEST(IndexBadInput, EmptyFile) {
  EXPECT_EQ(ParseError("").message(),
            "data/index.json: malformed JSON: JSON at byte offset 0: expected a value, got end of input");
}

TEST(IndexBadInput, NaNIsNotAnIndex) {
  // Valid for Python's parser, refused by simdjson: still a clear corrupt error.
  Status st = ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": NaN")));
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message().rfind("data/index.json: unsupported JSON: ", 0), 0u) << st.message();
}

TEST(IndexBadInput, TopLevelNotObject) {
  EXPECT_EQ(ParseError("[]").message(), "data/index.json: expected a JSON object at the top, got array");
}

TEST(IndexBadInput, MissingShards) {
  EXPECT_EQ(ParseError(R"({"version": 2})").message(), "data/index.json: field 'shards': missing");
}

TEST(IndexBadInput, ShardsNotArray) {
  EXPECT_EQ(ParseError(R"({"shards": {}, "version": 2})").message(),
            "data/index.json: field 'shards': expected array, got object");
}

TEST(IndexBadInput, UnsupportedIndexVersion) {
  Status st = ParseError(R"({"shards": [], "version": 3})");
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "data/index.json: field 'version': unsupported index version 3 (expected 2)");
}

TEST(IndexBadInput, EntryNotObject) {
  EXPECT_EQ(ParseError(IndexWith("42")).message(), "data/index.json: shard 1: expected object, got integer");
}

TEST(IndexBadInput, MissingSamples) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"samples\": 3, ", ""))).message(),
            "data/index.json: shard 1: field 'samples': missing");
}

TEST(IndexBadInput, MistypedSamples) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": \"3\""))).message(),
            "data/index.json: shard 1: field 'samples': expected unsigned integer, got string");
}

TEST(IndexBadInput, FloatSamples) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": 3.0"))).message(),
            "data/index.json: shard 1: field 'samples': expected unsigned integer, got float");
}

TEST(IndexBadInput, NegativeSamples) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": -3"))).message(),
            "data/index.json: shard 1: field 'samples': negative value -3");
}

TEST(IndexBadInput, AbsurdSamples) {
  EXPECT_EQ(
      ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": 4294967297"))).message(),
      "data/index.json: shard 1: field 'samples': value 4294967297 is larger than the limit 4294967296");
}

TEST(IndexBadInput, AbsurdBytes) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"bytes\": 100", "\"bytes\": 18446744073709551615")))
                .message(),
            "data/index.json: shard 1: field 'raw_data.bytes': value 18446744073709551615 is larger "
            "than the limit 281474976710656");
}

// A raw size later bounds decompression: it must be one the format can hold
// (u32 offsets: 4294967295 bytes), refused at parse naming shard and file.
TEST(IndexBadInput, RawSizeBeyondTheFormatIsRefused) {
  const std::string tib = Replace(kEntry, "\"bytes\": 100", "\"bytes\": 1099511627776");
  Status st = ParseError(IndexWith(tib));
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(),
            "data/index.json: shard 1: field 'raw_data.bytes': 'shard.00000.mds' declares "
            "1099511627776 bytes, more than 32-bit offsets address (4294967295)");
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"bytes\": 100", "\"bytes\": 4294967296")))
                .message(),
            "data/index.json: shard 1: field 'raw_data.bytes': 'shard.00000.mds' declares "
            "4294967296 bytes, more than 32-bit offsets address (4294967295)");
  Result<Index> largest =
      ParseIndex(IndexWith(Replace(kEntry, "\"bytes\": 100", "\"bytes\": 4294967295")), kSource);
  ASSERT_TRUE(largest.ok()) << largest.status().ToString();
  EXPECT_EQ(largest->shards[1].raw_data.bytes, kMaxShardFileBytes);
  // A zip may be larger than its raw file (incompressible data, gz padding).
  const std::string zipped =
      Replace(Replace(kEntry, "\"compression\": null", "\"compression\": \"gz\""),
              "\"zip_data\": null",
              R"("zip_data": {"basename": "shard.00000.mds.gz", "bytes": 4294967296, "hashes": {}})");
  EXPECT_TRUE(ParseIndex(IndexWith(zipped), kSource).ok());
}

// A split format's meta file: u32 n, n + 1 u32 offsets, a config.
TEST(IndexBadInput, MetaSizeBeyondTheFormatIsRefused) {
  const std::string entry =
      R"({"columns": {"id": "int"}, "compression": null, "format": "json", "hashes": [], "newline": "\n", )"
      R"("raw_data": {"basename": "shard.00000.json", "bytes": 10, "hashes": {}}, )"
      R"("raw_meta": {"basename": "shard.00000.json.meta", "bytes": 4294967307, "hashes": {}}, )"
      R"("samples": 1, "size_limit": null, "version": 2, "zip_data": null, "zip_meta": null})";
  EXPECT_EQ(MaxSplitMetaBytes(1), 4294967307u);
  EXPECT_TRUE(ParseIndex(IndexWith(entry), kSource).ok());
  EXPECT_EQ(ParseError(IndexWith(Replace(entry, "4294967307", "4294967308"))).message(),
            "data/index.json: shard 1: field 'raw_meta.bytes': 'shard.00000.json.meta' declares "
            "4294967308 bytes, more than the meta file of 1 samples holds (4294967307)");
}

TEST(IndexBadInput, AbsurdColumnSize) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "[8, null]", "[8, 1000000000000000]"))).message(),
            "data/index.json: shard 1: field 'column_sizes[1]': value 1000000000000000 is larger than "
            "the limit 281474976710656");
}

TEST(IndexBadInput, UnsafeBasenameDotDot) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "shard.00000.mds", "../../etc/passwd"))).message(),
            "data/index.json: shard 1: field 'raw_data.basename': unsafe path '../../etc/passwd' "
            "(must be relative, without '..', '\\' or NUL)");
}

TEST(IndexBadInput, UnsafeBasenameAbsolute) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "shard.00000.mds", "/etc/passwd"))).message(),
            "data/index.json: shard 1: field 'raw_data.basename': unsafe path '/etc/passwd' "
            "(must be relative, without '..', '\\' or NUL)");
}

TEST(IndexBadInput, UnsafeZipBasename) {
  const std::string entry =
      Replace(Replace(kEntry, "\"compression\": null", "\"compression\": \"zstd\""), "\"zip_data\": null",
              R"("zip_data": {"basename": "a/../../x.zstd", "bytes": 10, "hashes": {}})");
  EXPECT_EQ(ParseError(IndexWith(entry)).message(),
            "data/index.json: shard 1: field 'zip_data.basename': unsafe path 'a/../../x.zstd' "
            "(must be relative, without '..', '\\' or NUL)");
}

TEST(IndexBadInput, MissingRawData) {
  const std::string entry = Replace(
      kEntry, R"("raw_data": {"basename": "shard.00000.mds", "bytes": 100, "hashes": {}}, )", "");
  EXPECT_EQ(ParseError(IndexWith(entry)).message(), "data/index.json: shard 1: field 'raw_data': missing");
}

TEST(IndexBadInput, NullRawData) {
  const std::string entry = Replace(
      kEntry, R"({"basename": "shard.00000.mds", "bytes": 100, "hashes": {}})", "null");
  EXPECT_EQ(ParseError(IndexWith(entry)).message(),
            "data/index.json: shard 1: field 'raw_data': expected object, got null");
}

TEST(IndexBadInput, MistypedHashValue) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"hashes\": {}", "\"hashes\": {\"md5\": 5}"))).message(),
            "data/index.json: shard 1: field 'raw_data.hashes': algorithm 'md5': expected string, got integer");
}

TEST(IndexBadInput, MistypedHashList) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"hashes\": []", "\"hashes\": [\"md5\", 1]"))).message(),
            "data/index.json: shard 1: field 'hashes': item 1: expected string, got integer");
}

TEST(IndexBadInput, MissingFormat) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"format\": \"mds\", ", ""))).message(),
            "data/index.json: shard 1: field 'format': missing");
}

TEST(IndexBadInput, UnknownFormat) {
  Status st = ParseError(IndexWith(Replace(kEntry, "\"format\": \"mds\"", "\"format\": \"parquet\"")));
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "data/index.json: shard 1: field 'format': unknown shard format 'parquet'");
}

TEST(IndexBadInput, UnsupportedShardVersion) {
  Status st = ParseError(IndexWith(Replace(kEntry, "\"version\": 2", "\"version\": 1")));
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(st.message(), "data/index.json: shard 1: field 'version': unsupported shard version 1 (expected 2)");
}

TEST(IndexBadInput, ColumnListsDisagree) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "[\"id\", \"name\"]", "[\"id\"]"))).message(),
            "data/index.json: shard 1: field 'column_names': 1 names for 2 encodings");
}

TEST(IndexBadInput, ColumnSizesDisagree) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "[8, null]", "[8]"))).message(),
            "data/index.json: shard 1: field 'column_sizes': 1 sizes for 2 columns");
}

TEST(IndexBadInput, DuplicateColumn) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "[\"id\", \"name\"]", "[\"id\", \"id\"]"))).message(),
            "data/index.json: shard 1: field 'column_names': duplicate column 'id'");
}

TEST(IndexBadInput, DuplicateField) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"samples\": 3", "\"samples\": 3, \"samples\": 4")))
                .message(),
            "data/index.json: shard 1: duplicate field 'samples'");
}

TEST(IndexBadInput, MistypedCompression) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"compression\": null", "\"compression\": 19"))).message(),
            "data/index.json: shard 1: field 'compression': expected string or null, got integer");
}

TEST(IndexBadInput, CompressionWithoutZipData) {
  EXPECT_EQ(ParseError(IndexWith(Replace(kEntry, "\"compression\": null", "\"compression\": \"zstd\"")))
                .message(),
            "data/index.json: shard 1: field 'zip_data': null although 'compression' is set");
}

TEST(IndexBadInput, JsonEntryMissingMeta) {
  const std::string entry =
      R"({"columns": {"id": "int"}, "compression": null, "format": "json", "hashes": [], "newline": "\n", )"
      R"("raw_data": {"basename": "shard.00000.json", "bytes": 10, "hashes": {}}, "samples": 1, )"
      R"("size_limit": null, "version": 2, "zip_data": null, "zip_meta": null})";
  EXPECT_EQ(ParseError(IndexWith(entry)).message(), "data/index.json: shard 1: field 'raw_meta': missing");
}

TEST(IndexBadInput, JsonEntryMistypedColumns) {
  const std::string entry =
      R"({"columns": ["id"], "format": "json", "version": 2})";
  EXPECT_EQ(ParseError(IndexWith(entry)).message(),
            "data/index.json: shard 1: field 'columns': expected object, got array");
}

TEST(IndexBadInput, CsvEntryMissingNewline) {
  const std::string entry =
      R"({"column_encodings": ["int"], "column_names": ["id"], "format": "csv", "version": 2})";
  EXPECT_EQ(ParseError(IndexWith(entry)).message(), "data/index.json: shard 1: field 'newline': missing");
}

TEST(IndexBadInput, XsvEntryMissingSeparator) {
  const std::string entry =
      R"({"column_encodings": ["int"], "column_names": ["id"], "format": "xsv", "newline": "\n", )"
      R"("version": 2})";
  EXPECT_EQ(ParseError(IndexWith(entry)).message(), "data/index.json: shard 1: field 'separator': missing");
}

TEST(IndexBadInput, LongUntrustedTextIsCut) {
  const std::string entry = Replace(kEntry, "shard.00000.mds", "/" + std::string(200, 'a'));
  EXPECT_EQ(ParseError(IndexWith(entry)).message(),
            "data/index.json: shard 1: field 'raw_data.basename': unsafe path '/" + std::string(79, 'a') +
                "...' (must be relative, without '..', '\\' or NUL)");
}

}  // namespace
}  // namespace sluice

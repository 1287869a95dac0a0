// Test helpers for the split text formats: the compat datasets under
// tests/data/mosaic/mds/ and their expected.jsonl (parsed with simdjson, so
// the oracle does not depend on the code under test).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/codec/compression.h"
#include "formats/index/index.h"

namespace sluice::text_test {

inline std::string DatasetDir(const std::string& name) {
  return std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/" + name;
}

inline Index LoadIndex(const std::string& dataset) {
  std::string path = DatasetDir(dataset) + "/index.json";
  auto text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  auto index = ParseIndex(*text, path);
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  return index.ok() ? *index : Index{};
}

// The decompressed bytes of a raw file (raw_data / raw_meta), reading the
// zip file when the shard is compressed.
inline std::string LoadRaw(const std::string& dataset, const ShardEntry& entry,
                           const FileInfo& raw, const std::optional<FileInfo>& zip) {
  std::string dir = DatasetDir(dataset);
  if (!zip) {
    auto bytes = ReadFile(JoinPath(dir, raw.basename));
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    return bytes.ok() ? *bytes : "";
  }
  auto c = ParseCompression(*entry.compression);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  auto stored = ReadFile(JoinPath(dir, zip->basename));
  EXPECT_TRUE(stored.ok()) << stored.status().ToString();
  auto raw_bytes = Decompress(*c, *stored, raw.bytes, zip->basename);
  EXPECT_TRUE(raw_bytes.ok()) << raw_bytes.status().ToString();
  return raw_bytes.ok() ? *raw_bytes : "";
}

inline std::string LoadData(const std::string& dataset, const ShardEntry& e) {
  return LoadRaw(dataset, e, e.raw_data, e.zip_data);
}
inline std::string LoadMeta(const std::string& dataset, const ShardEntry& e) {
  return LoadRaw(dataset, e, *e.raw_meta, e.zip_meta);
}

// One line of expected.jsonl, as a parsed simdjson document kept alive with
// its padded text.
struct ExpectedSample {
  uint64_t sample = 0, shard = 0, index_in_shard = 0;
  std::string line;  // decoded line_hex
  std::string json;  // the whole expected.jsonl line
};

inline std::vector<ExpectedSample> LoadExpected(const std::string& dataset) {
  auto text = ReadFile(DatasetDir(dataset) + "/expected.jsonl");
  EXPECT_TRUE(text.ok());
  std::vector<ExpectedSample> out;
  simdjson::dom::parser parser;
  size_t pos = 0;
  while (text.ok() && pos < text->size()) {
    size_t nl = text->find('\n', pos);
    if (nl == std::string::npos) nl = text->size();
    ExpectedSample s;
    s.json = text->substr(pos, nl - pos);
    pos = nl + 1;
    simdjson::dom::element doc = parser.parse(s.json);
    s.sample = uint64_t(doc["sample"]);
    s.shard = uint64_t(doc["shard"]);
    s.index_in_shard = uint64_t(doc["index_in_shard"]);
    EXPECT_TRUE(HexDecode(std::string_view(doc["line_hex"]), &s.line));
    out.push_back(std::move(s));
  }
  return out;
}

// Python's float(repr) for the value_repr strings of expected.jsonl.
inline double ReprToDouble(std::string_view repr) {
  if (repr == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (repr == "inf") return std::numeric_limits<double>::infinity();
  if (repr == "-inf") return -std::numeric_limits<double>::infinity();
  return std::strtod(std::string(repr).c_str(), nullptr);
}

inline uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

}  // namespace sluice::text_test

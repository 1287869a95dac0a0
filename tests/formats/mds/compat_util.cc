#include "tests/formats/mds/compat_util.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/file.h"

namespace sluice::testing {

std::string MdsDataDir(std::string_view dataset) {
  return JoinPath(std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds", dataset);
}

const JsonValue* Get(const JsonValue& obj, std::string_view key) {
  const auto* o = std::get_if<JsonValue::Object>(&obj.v);
  if (o == nullptr) return nullptr;
  for (const auto& [k, v] : *o) {
    if (k == key) return &v;
  }
  return nullptr;
}

const JsonValue& At(const JsonValue& obj, std::string_view key) {
  const JsonValue* v = Get(obj, key);
  if (v == nullptr) {
    ADD_FAILURE() << "missing key " << key;
    static const JsonValue kNull{nullptr};
    return kNull;
  }
  return *v;
}

std::string Str(const JsonValue& v) {
  const auto* s = std::get_if<std::string>(&v.v);
  if (s == nullptr) {
    ADD_FAILURE() << "not a string";
    return "";
  }
  return *s;
}

int64_t Int(const JsonValue& v) {
  const auto* i = std::get_if<int64_t>(&v.v);
  if (i == nullptr) {
    ADD_FAILURE() << "not an int64";
    return 0;
  }
  return *i;
}

const JsonValue::Array& Arr(const JsonValue& v) {
  static const JsonValue::Array kEmpty;
  const auto* a = std::get_if<JsonValue::Array>(&v.v);
  if (a == nullptr) {
    ADD_FAILURE() << "not an array";
    return kEmpty;
  }
  return *a;
}

std::vector<JsonValue> LoadExpected(std::string_view dataset) {
  auto text = ReadFile(JoinPath(MdsDataDir(dataset), "expected.jsonl"));
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  std::vector<JsonValue> out;
  if (!text.ok()) return out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto v = ParsePyJson(line);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    if (v.ok()) out.push_back(std::move(v).value());
  }
  return out;
}

namespace {

std::optional<FileInfo> ParseFileInfo(const JsonValue& v) {
  if (std::holds_alternative<std::nullptr_t>(v.v)) return std::nullopt;
  FileInfo f;
  f.basename = Str(At(v, "basename"));
  f.bytes = static_cast<uint64_t>(Int(At(v, "bytes")));
  if (const auto* o = std::get_if<JsonValue::Object>(&At(v, "hashes").v)) {
    for (const auto& [k, h] : *o) f.hashes[k] = Str(h);
  }
  return f;
}

}  // namespace

std::vector<CompatShard> LoadCompatShards(std::string_view dataset) {
  std::vector<CompatShard> out;
  auto text = ReadFile(JoinPath(MdsDataDir(dataset), "index.json"));
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return out;
  auto index = ParsePyJson(*text);
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  if (!index.ok()) return out;
  for (const JsonValue& s : Arr(At(*index, "shards"))) {
    CompatShard cs;
    ShardEntry& e = cs.entry;
    e.format = Str(At(s, "format"));
    e.version = static_cast<int>(Int(At(s, "version")));
    for (const auto& n : Arr(At(s, "column_names"))) e.column_names.push_back(Str(n));
    for (const auto& n : Arr(At(s, "column_encodings"))) e.column_encodings.push_back(Str(n));
    for (const auto& n : Arr(At(s, "column_sizes"))) {
      if (std::holds_alternative<std::nullptr_t>(n.v)) {
        e.column_sizes.push_back(std::nullopt);
      } else {
        e.column_sizes.push_back(static_cast<uint64_t>(Int(n)));
      }
    }
    const JsonValue& comp = At(s, "compression");
    if (!std::holds_alternative<std::nullptr_t>(comp.v)) e.compression = Str(comp);
    for (const auto& h : Arr(At(s, "hashes"))) e.hashes.push_back(Str(h));
    const JsonValue& limit = At(s, "size_limit");
    if (!std::holds_alternative<std::nullptr_t>(limit.v)) {
      e.size_limit = static_cast<uint64_t>(Int(limit));
    }
    e.samples = static_cast<uint64_t>(Int(At(s, "samples")));
    e.raw_data = *ParseFileInfo(At(s, "raw_data"));
    e.zip_data = ParseFileInfo(At(s, "zip_data"));
    const size_t slash = e.raw_data.basename.rfind('/');
    if (slash != std::string::npos) cs.basename_dir = e.raw_data.basename.substr(0, slash);
    out.push_back(std::move(cs));
  }
  return out;
}

}  // namespace sluice::testing

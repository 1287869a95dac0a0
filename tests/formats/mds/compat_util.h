// Test helpers: the compat datasets under tests/data/mosaic/mds/ and their
// expected.jsonl, read with Sluice's own Python-dialect JSON parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/json/py_json.h"

namespace sluice::testing {

std::string MdsDataDir(std::string_view dataset);

// Member `key` of a JSON object, or nullptr.
const JsonValue* Get(const JsonValue& obj, std::string_view key);
const JsonValue& At(const JsonValue& obj, std::string_view key);  // asserts
std::string Str(const JsonValue& v);                               // asserts string
int64_t Int(const JsonValue& v);                                   // asserts int64
const JsonValue::Array& Arr(const JsonValue& v);

// The lines of expected.jsonl, parsed.
std::vector<JsonValue> LoadExpected(std::string_view dataset);

// Shard entries of <dataset>/index.json (or of `index_path` relative to the
// dataset), parsed from JSON by hand (independent of formats/index).
struct CompatShard {
  ShardEntry entry;          // columns, compression, hashes, size_limit, samples, files
  std::string basename_dir;  // folder part of raw_data.basename ("" or "part0")
};
std::vector<CompatShard> LoadCompatShards(std::string_view dataset);

}  // namespace sluice::testing

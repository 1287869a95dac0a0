// Checks shared by the `sluice bench` tests: the report's shape (every
// field present) and the dataset's stored bytes as its index.json states
// them. Not thread-safe (gtest assertions).
#pragma once

#include <string>

#include "formats/json/py_json.h"

namespace sluice::testing {

// The member `path` ("cache.per_node.0.cache_hits": array elements by
// number) of a JSON object; fails the test and
// returns a null value when absent.
const JsonValue& At(const JsonValue& obj, const std::string& path);
double Num(const JsonValue& obj, const std::string& path);

// Every field bench_report.h documents is present, with the right type.
void ExpectEveryField(const JsonValue& report);

// The sum over index.json's shards of the bytes a cold cache downloads:
// zip_data when the shard is compressed, else raw_data (+ the meta files).
uint64_t StoredBytes(const std::string& dataset_folder);

}  // namespace sluice::testing

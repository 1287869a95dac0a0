// Test helpers: read the order/ vectors with simdjson's DOM API.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::planner::testing {

inline std::string MosaicOrderPath(const std::string& rel) {
  return std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/order/" + rel;
}

// Flattens nested arrays of integers (row-major) into `out`.
inline void FlattenInts(simdjson::dom::element e, std::vector<int64_t>& out) {
  if (e.is_array()) {
    for (auto x : e.get_array()) FlattenInts(x, out);
  } else {
    out.push_back(int64_t(e.get_int64()));
  }
}

inline std::vector<int64_t> Ints(simdjson::dom::element e) {
  std::vector<int64_t> out;
  FlattenInts(e, out);
  return out;
}

inline std::optional<int64_t> OptInt(simdjson::dom::element e) {
  if (e.is_null()) return std::nullopt;
  return int64_t(e.get_int64());
}

inline std::string Str(simdjson::dom::element e) { return std::string(std::string_view(e.get_string())); }

// The unit vectors cut error messages at 200 characters; compare that prefix.
inline bool SameMessage(const std::string& got, const std::string& recorded) {
  if (recorded.size() >= 200) return got.compare(0, recorded.size(), recorded) == 0;
  return got == recorded;
}

inline std::string Dump(simdjson::dom::element e) { return simdjson::minify(e); }

}  // namespace sluice::planner::testing

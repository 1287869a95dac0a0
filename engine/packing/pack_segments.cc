#include "engine/packing/pack_segments.h"

#include <variant>

#include "engine/packing/worker_rows.h"
#include "formats/json/py_json.h"

namespace sluice {

Result<std::vector<PackSegment>> ParsePackSegments(std::string_view json) {
  SLUICE_ASSIGN_OR_RETURN(JsonValue root, ParsePyJson(json));
  const auto* list = std::get_if<JsonValue::Array>(&root.v);
  if (list == nullptr || list->empty()) {
    return InvalidArgumentError("pack segments: must be a non-empty JSON list");
  }
  std::vector<PackSegment> out;
  for (size_t k = 0; k < list->size(); ++k) {
    const std::string at = "pack segment " + std::to_string(k);
    const auto* members = std::get_if<JsonValue::Object>(&(*list)[k].v);
    if (members == nullptr) return InvalidArgumentError(at + ": must be a JSON object");
    PackSegment s;
    int found = 0;
    for (const auto& [key, value] : *members) {
      const int64_t* i = std::get_if<int64_t>(&value.v);
      const int64_t least = key == "rows" ? 0 : 1;
      // Shapes far beyond any job (2^20) would only overflow role counts.
      if (i == nullptr || *i < least || (key != "rows" && *i > (int64_t{1} << 20))) {
        return InvalidArgumentError(at + ": '" + key + "' must be an integer in " +
                                    std::to_string(least) + "..2^" +
                                    (key == "rows" ? "63" : "20"));
      }
      if (key == "nodes") {
        s.nodes = *i;
      } else if (key == "ranks_per_node") {
        s.ranks_per_node = *i;
      } else if (key == "workers") {
        s.workers = *i;
      } else if (key == "batch_size") {
        s.batch_size = *i;
      } else if (key == "rows") {
        s.rows = static_cast<uint64_t>(*i);
      } else {
        return InvalidArgumentError(at + ": '" + key +
                                    "' is not a key (nodes, ranks_per_node, workers, batch_size, "
                                    "rows)");
      }
      ++found;
    }
    if (found != 5) {
      return InvalidArgumentError(at + ": needs nodes, ranks_per_node, workers, batch_size and rows");
    }
    out.push_back(s);
  }
  return out;
}

uint64_t RoleRows(const PackSegment& segment, int64_t role) {
  const auto ranks = static_cast<uint64_t>(segment.nodes * segment.ranks_per_node);
  return WorkerRows(segment.rows / ranks, static_cast<uint64_t>(segment.batch_size),
                    static_cast<uint64_t>(role % segment.workers),
                    static_cast<uint64_t>(segment.workers));
}

Result<std::vector<PackItem>> ConcatLeftover(const std::vector<PackItem>& items, uint64_t rows,
                                             uint64_t seq_len, bool eos,
                                             const std::function<Result<uint64_t>(int64_t)>& tokens) {
  const uint64_t target = rows * seq_len;
  uint64_t passed = 0;  // tokens of the items before `k`
  size_t k = 0;
  for (; k < items.size() && passed < target; ++k) {
    SLUICE_ASSIGN_OR_RETURN(const uint64_t n, tokens(items[k].id));
    const uint64_t size = n + (eos ? 1 : 0) - items[k].offset;
    if (passed + size > target) {  // the next row starts inside this item
      std::vector<PackItem> out{{items[k].id, items[k].offset + (target - passed)}};
      out.insert(out.end(), items.begin() + static_cast<std::ptrdiff_t>(k + 1), items.end());
      return out;
    }
    passed += size;
  }
  return std::vector<PackItem>(items.begin() + static_cast<std::ptrdiff_t>(k), items.end());
}

std::vector<std::vector<PackItem>> ShareLeftovers(const std::vector<std::vector<PackItem>>& leftovers,
                                                  int64_t roles) {
  std::vector<PackItem> all;
  for (const auto& l : leftovers) all.insert(all.end(), l.begin(), l.end());
  const auto n = static_cast<size_t>(roles);
  std::vector<std::vector<PackItem>> out(n);
  size_t at = 0;
  for (size_t r = 0; r < n; ++r) {
    const size_t size = all.size() / n + (r < all.size() % n ? 1 : 0);
    out[r].assign(all.begin() + static_cast<std::ptrdiff_t>(at),
                  all.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
  }
  return out;
}

}  // namespace sluice

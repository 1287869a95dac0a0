#include "engine/packing/pack_segments.h"

#include <algorithm>
#include <variant>

#include "engine/packing/row_packer.h"
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
    const uint64_t size = ItemSize(items[k], n, eos);
    if (passed + size > target) {  // the next row starts inside this item
      std::vector<PackItem> out{{items[k].id, items[k].offset + (target - passed)}};
      out.insert(out.end(), items.begin() + static_cast<std::ptrdiff_t>(k + 1), items.end());
      return out;
    }
    passed += size;
  }
  return std::vector<PackItem>(items.begin() + static_cast<std::ptrdiff_t>(k), items.end());
}

uint64_t ItemSize(const PackItem& item, uint64_t doc_tokens, bool eos) {
  const uint64_t whole = doc_tokens + (eos ? 1 : 0);
  const uint64_t end = std::min(item.end, whole);
  return end > item.offset ? end - item.offset : 0;
}

namespace {

// Each bin window of `items` in turn: `each(first, sizes)` with the index
// of its first item and its items' sizes; stops when it returns false.
template <typename Each>
Status ForEachBinWindow(const std::vector<PackItem>& items, const PackSpec& spec,
                        const DocTokens& tokens, Each each) {
  const bool eos = spec.eos_id >= 0;
  std::vector<uint64_t> sizes;
  for (size_t first = 0; first < items.size(); first += sizes.size()) {
    sizes.clear();
    for (size_t k = first; k < items.size() && sizes.size() < spec.bin_window; ++k) {
      SLUICE_ASSIGN_OR_RETURN(const uint64_t n, tokens(items[k].id));
      sizes.push_back(ItemSize(items[k], n, eos));
    }
    if (!each(first, sizes)) break;
  }
  return Status::Ok();
}

}  // namespace

Result<BinSkip> BinSkipOf(const std::vector<PackItem>& items, uint64_t rows, const PackSpec& spec,
                          const DocTokens& tokens) {
  BinSkip out{items.size(), 0, {}};
  uint64_t passed = 0;
  SLUICE_RETURN_IF_ERROR(ForEachBinWindow(items, spec, tokens, [&](size_t first, const auto& sizes) {
    const uint64_t n = RowPacker::BinWindowRows(sizes, spec.seq_len);
    if (passed + n <= rows) {
      passed += n;
      return true;
    }
    out = {first, rows - passed, sizes};
    return false;
  }));
  return out;
}

Result<std::vector<PackItem>> BinLeftover(const std::vector<PackItem>& items, uint64_t rows,
                                          const PackSpec& spec, const DocTokens& tokens) {
  SLUICE_ASSIGN_OR_RETURN(const BinSkip skip, BinSkipOf(items, rows, spec, tokens));
  const auto rest = items.begin() + static_cast<std::ptrdiff_t>(skip.item);
  if (skip.rows == 0) return std::vector<PackItem>(rest, items.end());
  // The window holding the row: its rows from `skip.rows` on, as pieces.
  std::vector<PackItem> out;
  const auto window = RowPacker::BinWindow(skip.sizes, spec.seq_len);
  for (size_t r = skip.rows; r < window.size(); ++r) {
    for (const RowPacker::BinPiece& p : window[r]) {
      const PackItem& item = items[skip.item + p.document];
      out.push_back({item.id, item.offset + p.offset, item.offset + p.offset + p.size});
    }
  }
  out.insert(out.end(), rest + static_cast<std::ptrdiff_t>(skip.sizes.size()), items.end());
  return out;
}

Result<std::vector<PackItem>> Leftover(const std::vector<PackItem>& items, uint64_t rows,
                                       const PackSpec& spec, const DocTokens& tokens) {
  if (spec.method == PackMethod::kBin) return BinLeftover(items, rows, spec, tokens);
  return ConcatLeftover(items, rows, spec.seq_len, spec.eos_id >= 0, tokens);
}

Result<uint64_t> ItemRows(const std::vector<PackItem>& items, uint64_t cap, const PackSpec& spec,
                          const DocTokens& tokens) {
  uint64_t rows = 0;
  if (spec.method == PackMethod::kBin) {
    SLUICE_RETURN_IF_ERROR(ForEachBinWindow(items, spec, tokens, [&](size_t, const auto& sizes) {
      rows += RowPacker::BinWindowRows(sizes, spec.seq_len);
      return rows < cap;
    }));
    return std::min(rows, cap);
  }
  const bool eos = spec.eos_id >= 0;
  uint64_t total = 0;
  for (const PackItem& item : items) {
    SLUICE_ASSIGN_OR_RETURN(const uint64_t n, tokens(item.id));
    total += ItemSize(item, n, eos);
    if (total / spec.seq_len >= cap) return cap;
  }
  rows = total / spec.seq_len + (!spec.drop_last && total % spec.seq_len != 0 ? 1 : 0);
  return std::min(rows, cap);
}

std::vector<uint64_t> RankRoleRows(const PackSegment& segment, const std::vector<uint64_t>& totals) {
  const auto ranks = static_cast<uint64_t>(segment.nodes * segment.ranks_per_node);
  const uint64_t rank_rows = segment.rows / ranks;
  const auto batch = static_cast<uint64_t>(segment.batch_size);
  std::vector<uint64_t> naive(totals.size());
  bool ran_out = false;
  for (size_t w = 0; w < totals.size(); ++w) {
    naive[w] = WorkerRows(rank_rows, batch, w, totals.size());
    ran_out |= totals[w] < naive[w];
  }
  return ran_out ? DealtRows(totals, rank_rows, batch, nullptr) : naive;
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

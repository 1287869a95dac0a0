// Elastic resumption of packed rows: an epoch's packed stream read over a
// sequence of world shapes ("segments"), each segment a run of the job on
// one shape (nodes, ranks per node, DataLoader workers, batch size) that
// consumed some rows before its checkpoint.
//
// The rule (one owner): segment 0's roles (rank r's DataLoader worker w,
// role r * workers + w) read the epoch's plan on segment 0's shape, each
// its own samples whole. Each role of segment k consumed the rows the
// DataLoader dealt it (WorkerRows of the segment's rows per rank); under
// concat that is the first rows * seq_len tokens of its items (a document
// followed by its eos), so its leftover is the items after them, the first
// one possibly from a token offset on (a document a row boundary cut);
// under bin it is the pieces of the rows not consumed of the window it
// stopped in, then the windows after it (BinLeftover). A role that ran out
// before the others (the epoch's tail) was dealt as the DataLoader deals
// there (RankRoleRows).
// Segment k + 1's roles share the leftovers of all segment k's roles,
// joined in role order and cut into as many contiguous blocks as it has
// roles (sizes differing by one at most, the longer ones first), so every
// token of the epoch's plan not consumed before a checkpoint is packed
// exactly once after it, and the rows are the same for the same segments.
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/packing/pack_spec.h"

namespace sluice {

struct PackSegment {
  int64_t nodes = 1, ranks_per_node = 1, workers = 1, batch_size = 1;
  uint64_t rows = 0;  // rows the job (all ranks) consumed in this segment
  int64_t roles() const { return nodes * ranks_per_node * workers; }
  bool SameShape(const PackSegment& o) const {
    return nodes == o.nodes && ranks_per_node == o.ranks_per_node && workers == o.workers &&
           batch_size == o.batch_size;
  }
};

// A document (or a piece of one) still to pack: a global sample id, the
// token it starts from (0: from the document's start; > 0: the rest of one
// a row boundary cut) and the token it ends before (kToEnd: the document's
// end; bin's pieces end earlier), its eos counted as its last token.
struct PackItem {
  static constexpr uint64_t kToEnd = UINT64_MAX;
  int64_t id = 0;
  uint64_t offset = 0;
  uint64_t end = kToEnd;
  bool operator==(const PackItem&) const = default;
};

// A document's token count without eos (by its global sample id).
using DocTokens = std::function<Result<uint64_t>(int64_t)>;

// The tokens `item` packs when its document has `doc_tokens` tokens (and
// an eos after them when `eos`).
uint64_t ItemSize(const PackItem& item, uint64_t doc_tokens, bool eos);

// `[{"nodes": .., "ranks_per_node": .., "workers": .., "batch_size": ..,
// "rows": ..}, ...]`, at least one, every value a positive integer (rows
// may be 0). kInvalidArgument naming the segment and key otherwise.
Result<std::vector<PackSegment>> ParsePackSegments(std::string_view json);

// The rows role `role` of `segment` consumed (the DataLoader dealt it).
uint64_t RoleRows(const PackSegment& segment, int64_t role);

// Concat: the items left after the first `rows` rows of `items` (rows of
// `seq_len` tokens, a document's eos, when `eos`, counted as its last
// token). `tokens(id)` is a document's token count without eos. Errors
// are tokens()'s.
Result<std::vector<PackItem>> ConcatLeftover(const std::vector<PackItem>& items, uint64_t rows,
                                             uint64_t seq_len, bool eos,
                                             const std::function<Result<uint64_t>(int64_t)>& tokens);

// Bin: the items left after the first `rows` rows of `items` (packed in
// windows of `spec.bin_window` items, RowPacker::BinWindow): the window the
// rows end in gives the pieces of its rows not consumed (in the order the
// rows are handed out, each row's pieces in placement order), the windows
// after it their items whole. Errors are tokens()'s.
Result<std::vector<PackItem>> BinLeftover(const std::vector<PackItem>& items, uint64_t rows,
                                          const PackSpec& spec, const DocTokens& tokens);

// The leftover under `spec.method` (ConcatLeftover or BinLeftover).
Result<std::vector<PackItem>> Leftover(const std::vector<PackItem>& items, uint64_t rows,
                                       const PackSpec& spec, const DocTokens& tokens);

// The rows `items` pack into under `spec`, counted up to `cap` (the
// smaller of the two).
Result<uint64_t> ItemRows(const std::vector<PackItem>& items, uint64_t cap, const PackSpec& spec,
                          const DocTokens& tokens);

// Bin: where the rows after the first `rows` of `items` come from when
// `items` are packed again: the index of the first item of the window
// that holds row `rows` (items.size() when there is none) and the rows of
// that window before it (a resume drops them), and the window's items'
// sizes.
struct BinSkip {
  size_t item = 0;
  uint64_t rows = 0;
  std::vector<uint64_t> sizes;
};
Result<BinSkip> BinSkipOf(const std::vector<PackItem>& items, uint64_t rows, const PackSpec& spec,
                          const DocTokens& tokens);

// The rows each role of one rank of `segment` consumed, from the rows each
// of them had in the segment (`totals`, the rank's workers in order):
// RoleRows' while none had fewer (ran out), else the DataLoader's rounds
// in the epoch's tail (worker_rows.h DealtRows).
std::vector<uint64_t> RankRoleRows(const PackSegment& segment, const std::vector<uint64_t>& totals);

// The next segment's items of each of its `roles` roles from the
// leftovers of the previous segment's roles (in role order): joined and
// cut into contiguous blocks, the first (size % roles) one item longer.
std::vector<std::vector<PackItem>> ShareLeftovers(const std::vector<std::vector<PackItem>>& leftovers,
                                                  int64_t roles);

}  // namespace sluice

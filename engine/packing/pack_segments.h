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
// one possibly from a token offset on (a document a row boundary cut).
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

// A document still to pack: a global sample id and the token it starts
// from (0: the whole document; > 0: the rest of one a row boundary cut).
struct PackItem {
  int64_t id = 0;
  uint64_t offset = 0;
  bool operator==(const PackItem&) const = default;
};

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

// The next segment's items of each of its `roles` roles from the
// leftovers of the previous segment's roles (in role order): joined and
// cut into contiguous blocks, the first (size % roles) one item longer.
std::vector<std::vector<PackItem>> ShareLeftovers(const std::vector<std::vector<PackItem>>& leftovers,
                                                  int64_t roles);

}  // namespace sluice

// Internal: the "orig" partition as an index function, so that the whole
// array and one worker's slice share one definition. Not a public header.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/planner/partition.h"

namespace sluice::planner {

// Whether `relaxed` partitions exactly as `orig` for these arguments.
bool RelaxedIsOrig(const PartitionArgs& args);

class OrigLayout {
 public:
  // Validates like Mosaic (resume past end, divisibility, broadcast quirk)
  // and precomputes the per-canonical-node row starts.
  static Result<OrigLayout> Make(const PartitionArgs& args);

  std::array<int64_t, 5> shape() const { return {P_, R_, W_, batches_, B_}; }
  // Rank list length before -1 padding (S) and after (S').
  int64_t rank_len() const { return S_; }

  // Element q (0 <= q < S) of rank r of node p.
  int64_t RankElem(int64_t p, int64_t r, int64_t q) const { return NodeElem(p, r + q * R_); }
  // out[i] = RankElem(p, r, q0 + i) for i < n, -1 where q0 + i >= S: a run
  // of a rank's list stepped through (no division per element); FillRank
  // writes a rank as such runs.
  void RankRun(int64_t p, int64_t r, int64_t q0, int64_t n, int64_t* out) const;
  // Writes node p, rank r's S' values (padding -1) in worker/batch/slot layout
  // into `work`.
  void FillRank(int64_t p, int64_t r, WorkArray& work) const;

  // The inverse view, for callers that produce the epoch one canonical node
  // (row) at a time. Only when plain(): not the tiny case and no pad columns,
  // so column j of row c is position row_begin(c) + j (the row's last
  // position repeated in a short row's last column).
  bool plain() const { return !tiny_ && pad_ == 0; }
  int64_t row_begin(int64_t c) const { return row_start_[static_cast<size_t>(c)]; }
  // Writes row c, given as the values of its positions (values[i] for
  // position row_begin(c) + i, n of them), into every slot of `work` (shaped
  // shape()) that reads one of them. Slots of other rows, the ranks'
  // extension and padding are left alone. `table`, when not null, maps each
  // value first (values index it).
  void ScatterRow(int64_t c, const int64_t* values, int64_t n, const int64_t* table, WorkArray& work) const;
  // After every row was scattered: the ranks' extension slots (a rank list
  // padded to a multiple of R repeats earlier elements) copied from the slots
  // they repeat. Slots past a rank's list are left alone (callers fill -1).
  void FillExtension(WorkArray& work) const;

 private:
  int64_t NodeElem(int64_t p, int64_t j) const;   // 0 <= j < M + u
  int64_t Row(int64_t c, int64_t j) const;        // canonical row c, column j
  int64_t BaseRow(int64_t c, int64_t j) const;    // before the pad overwrite

  int64_t N_ = 0, C_ = 1, P_ = 1, R_ = 1, W_ = 1, B_ = 1, drop_ = 0;
  int64_t spc_ = 0, ratio_ = 1, pad_ = 0, L_ = 0;
  int64_t pad_src_ = 0;      // first source column of the pad overwrite
  bool pad_broadcast_ = false;  // source has one column, fills all pad columns
  bool tiny_ = false;
  int64_t M_ = 0, u_ = 0, S_ = 0, batches_ = 0;
  std::vector<int64_t> row_start_;  // a_c, normal case only
  std::vector<uint8_t> row_short_;  // b_c - a_c < spc
};

}  // namespace sluice::planner

#include <algorithm>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/partition_orig.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

constexpr char kNotDivisible[] =
    "Either canonical or physical nodes must be evenly divisible by the other, otherwise "
    "striping slices of shards over nodes may lead to each node downloading all shards";

// Python's slice-bound normalisation for a negative index into length n.
int64_t PyIndex(int64_t i, int64_t n) {
  if (i < 0) i += n;
  if (i < 0) i = 0;
  if (i > n) i = n;
  return i;
}

}  // namespace

Status CheckResume(const PartitionArgs& a) {
  const int64_t ws = a.num_physical_nodes * a.ranks_per_node;
  const int64_t rep = ws - a.num_samples % ws;
  if (a.num_samples + rep < a.drop_first) {
    return MosaicValueError("Resuming further into the dataset (" + std::to_string(a.drop_first) +
                            ") than it has samples (" + std::to_string(a.num_samples) + ")");
  }
  return Status::Ok();
}

Status CheckPartitionArgs(const PartitionArgs& a) {
  auto positive = [](int64_t v, const char* name) -> Status {
    if (v <= 0) return MosaicValueError(std::string(name) + " must be positive, got " + std::to_string(v));
    return Status::Ok();
  };
  SLUICE_RETURN_IF_ERROR(positive(a.num_samples, "num_samples"));
  SLUICE_RETURN_IF_ERROR(positive(a.num_canonical_nodes, "num_canonical_nodes"));
  SLUICE_RETURN_IF_ERROR(positive(a.num_physical_nodes, "num_physical_nodes"));
  SLUICE_RETURN_IF_ERROR(positive(a.ranks_per_node, "ranks_per_node"));
  SLUICE_RETURN_IF_ERROR(positive(a.workers_per_rank, "workers_per_rank"));
  SLUICE_RETURN_IF_ERROR(positive(a.batch_size, "batch_size"));
  if (a.drop_first < 0) return MosaicValueError("drop_first must be non-negative, got " + std::to_string(a.drop_first));
  if (a.initial_physical_nodes && *a.initial_physical_nodes <= 0)
    return MosaicValueError("initial_physical_nodes must be positive, got " +
                            std::to_string(*a.initial_physical_nodes));
  for (int64_t v : {a.num_samples, a.num_canonical_nodes, a.num_physical_nodes, a.ranks_per_node,
                    a.workers_per_rank, a.batch_size, a.drop_first}) {
    if (v > kMaxPlanElements) return MosaicValueError("planner argument too large: " + std::to_string(v));
  }
  // One batch for every worker of the world must stay sane (the array pads
  // every worker to whole batches).
  __int128 round = 1;
  for (int64_t v : {a.num_physical_nodes, a.ranks_per_node, a.workers_per_rank, a.batch_size}) {
    round *= v;  // each factor <= 2^36 and round <= 2^30 before: no overflow
    if (round > (int64_t{1} << 30)) {
      return MosaicValueError("nodes x ranks x workers x batch_size is beyond what the planner builds (2^30 ids "
                              "per round of batches)");
    }
  }
  return Status::Ok();
}

Result<OrigLayout> OrigLayout::Make(const PartitionArgs& a) {
  SLUICE_RETURN_IF_ERROR(CheckPartitionArgs(a));
  SLUICE_RETURN_IF_ERROR(CheckResume(a));
  OrigLayout o;
  o.N_ = a.num_samples;
  o.C_ = a.num_canonical_nodes;
  o.P_ = a.num_physical_nodes;
  o.R_ = a.ranks_per_node;
  o.W_ = a.workers_per_rank;
  o.B_ = a.batch_size;
  const int64_t N = o.N_, C = o.C_, P = o.P_;
  if ((C < P && P % C != 0) || (P < C && C % P != 0)) return MosaicValueError(kNotDivisible);
  o.drop_ = a.drop_first - a.drop_first % P;
  o.spc_ = (N + C - 1) / C;
  if (C < P) {
    o.ratio_ = P / C;
    o.pad_ = (o.ratio_ - o.spc_ % o.ratio_) % o.ratio_;
  }
  o.L_ = o.spc_ + o.pad_;
  SLUICE_RETURN_IF_ERROR(CheckProduct({C, o.L_}));
  SLUICE_RETURN_IF_ERROR(CheckCanonicalNodes(C, N));
  o.tiny_ = !(N > C || (N == C && C >= P));
  if (!o.tiny_) {
    if (o.pad_ > 0) {
      const int64_t L = o.L_, pad = o.pad_, ratio = o.ratio_;
      const int64_t start = PyIndex(-2 * pad - ratio + 1, L);
      const int64_t end = PyIndex(-pad - ratio + 1, L);
      const int64_t len = end > start ? end - start : 0;
      if (len != pad && len != 1) {
        return MosaicValueError("could not broadcast input array from shape (" + std::to_string(C) + "," +
                                std::to_string(len) + ") into shape (" + std::to_string(C) + "," +
                                std::to_string(pad) + ")");
      }
      o.pad_src_ = start;
      o.pad_broadcast_ = len == 1 && pad != 1;
    }
    o.row_start_.resize(static_cast<size_t>(C));
    o.row_short_.resize(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      const int64_t ac = static_cast<int64_t>(static_cast<__int128>(c) * N / C);
      const int64_t bc = static_cast<int64_t>(static_cast<__int128>(c + 1) * N / C);
      o.row_start_[static_cast<size_t>(c)] = ac;
      o.row_short_[static_cast<size_t>(c)] = bc - ac < o.spc_;
    }
  }
  const int64_t total = C * o.L_;
  o.M_ = total > o.drop_ ? (total - o.drop_) / P : 0;
  o.u_ = o.M_ % o.R_ ? o.R_ - o.M_ % o.R_ : 0;
  o.S_ = (o.M_ + o.u_) / o.R_;
  const int64_t wb = o.W_ * o.B_;
  o.batches_ = (o.S_ + wb - 1) / wb;
  SLUICE_RETURN_IF_ERROR(CheckProduct({o.P_, o.R_, o.W_, o.batches_, o.B_}));
  return o;
}

inline int64_t OrigLayout::BaseRow(int64_t c, int64_t j) const {
  int64_t v = row_start_[static_cast<size_t>(c)] + j;
  if (j == spc_ - 1 && row_short_[static_cast<size_t>(c)]) --v;
  return v;
}

int64_t OrigLayout::Row(int64_t c, int64_t j) const {
  if (tiny_) return static_cast<int64_t>((static_cast<__int128>(c) * L_ + j) % N_);
  if (pad_ > 0 && j >= L_ - pad_) j = pad_broadcast_ ? pad_src_ : pad_src_ + (j - (L_ - pad_));
  return BaseRow(c, j);
}

int64_t OrigLayout::NodeElem(int64_t p, int64_t j) const {
  if (j >= M_) {
    const int64_t e = j - M_;
    j = R_ + u_ - 1 <= M_ ? M_ - R_ - u_ + 1 + e : e % M_;
  }
  const int64_t k = drop_ + p + j * P_;
  return Row(k % C_, k / C_);
}

void OrigLayout::RankRun(int64_t p, int64_t r, int64_t q0, int64_t n, int64_t* out) const {
  // Element q < direct (the un-extended part) is column-major index
  // drop + p + (r + q * R) * P, which steps by R * P.
  const int64_t direct = M_ > r ? (M_ - r + R_ - 1) / R_ : 0;  // q with r + q*R < M
  const int64_t step = R_ * P_;
  const int64_t dcol = step / C_, drow = step % C_;
  const int64_t k0 = drop_ + p + (r + q0 * R_) * P_;
  int64_t row = k0 % C_, col = k0 / C_;
  int64_t i = 0;
  if (plain() && drow == 0) {
    // The step is whole columns (one canonical node, or as many as the
    // world's ranks): the run stays in one row, whose positions are
    // consecutive, so it is an arithmetic sequence but for a short row's
    // last column (BaseRow), patched after. A resumption's rest of the
    // epoch is this loop over every position left (issue 35).
    const int64_t m = std::clamp<int64_t>(direct - q0, 0, n);
    const int64_t base = row_start_[static_cast<size_t>(row)] + col;
    for (; i < m; ++i) out[i] = base + i * dcol;
    const int64_t last = spc_ - 1 - col;  // dcol >= 1 here: step >= C
    if (row_short_[static_cast<size_t>(row)] && last >= 0 && last % dcol == 0 && last / dcol < m) {
      --out[last / dcol];
    }
  }
  for (; i < n; ++i) {
    const int64_t q = q0 + i;
    if (q < direct) {
      // Row(row, col), with its common case (plain(): no wrap, no pad
      // columns) spelled out: this loop runs once per sample of the epoch.
      out[i] = plain() ? BaseRow(row, col) : Row(row, col);
      row += drow;
      col += dcol;
      if (row >= C_) {
        row -= C_;
        ++col;
      }
    } else {
      out[i] = q < S_ ? RankElem(p, r, q) : -1;
    }
  }
}

void OrigLayout::FillRank(int64_t p, int64_t r, WorkArray& work) const {
  int64_t* base = work.ids.data() + work.Offset(p, r, 0, 0, 0);
  // Layout within the rank: q -> worker (q/B)%W, batch q/(W*B), slot q%B; the
  // rank's block is W * batches * B contiguous values, worker-major, and
  // each (batch, worker) slot row is a run of the rank's list.
  const int64_t per_worker = batches_ * B_;
  for (int64_t b = 0; b < batches_; ++b) {
    for (int64_t w = 0; w < W_; ++w) {
      RankRun(p, r, (b * W_ + w) * B_, B_, base + w * per_worker + b * B_);
    }
  }
}

}  // namespace sluice::planner

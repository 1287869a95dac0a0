// One worker's view of the shuffle: only the canonical nodes it reads.
#include <algorithm>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"
#include "engine/planner/size_check.h"
#include "engine/planner/work_array.h"

namespace sluice::planner {

int64_t PartialShuffle::operator()(int64_t position) const {
  if (!full_.empty()) return full_[size_t(position)];
  const size_t i = size_t(std::upper_bound(part_begin_.begin(), part_begin_.end(), position) - part_begin_.begin()) - 1;
  return parts_[i][size_t(position - part_begin_[i])];
}

void PartialShuffle::Map(std::vector<int64_t>& ids) const {
  if (!full_.empty()) {
    MapThrough(ids, full_);
    return;
  }
  for (int64_t& x : ids)
    if (x >= 0) x = (*this)(x);
}

int64_t PartialShuffle::held() const {
  int64_t n = int64_t(full_.size());
  for (const auto& p : parts_) n += int64_t(p.size());
  return n;
}

Result<PartialShuffle> GetPartialShuffle(ShuffleAlgo algo, std::span<const int64_t> units, int64_t C, uint64_t seed,
                                         uint64_t epoch, int64_t block, std::span<const int64_t> positions,
                                         const std::atomic<bool>* cancel) {
  PartialShuffle out;
  if (algo != ShuffleAlgo::kPy1e && algo != ShuffleAlgo::kPy1s) {
    SLUICE_ASSIGN_OR_RETURN(out.full_, GetShuffle(algo, units, C, seed, epoch, block, cancel));
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(const int64_t total, CheckShuffleArgs(units, C, block));
  numpy::Generator ep = MakeRng(seed, epoch);
  const DividedSpans parts = ShuffledParts(units, C, seed, ep);
  out.part_begin_.resize(size_t(C) + 1);
  for (int64_t i = 0; i <= C; ++i)
    out.part_begin_[size_t(i)] = int64_t(static_cast<__int128>(total) * i / C);
  // Per part, the requested positions' range [lo, hi) within it (lo >= hi:
  // none). A resumed reader requests the tail of its parts only.
  std::vector<int64_t> lo(size_t(C), INT64_MAX), hi(size_t(C), 0);
  std::vector<uint8_t> needed(size_t(C), 0);
  for (int64_t x : positions) {
    if (x < 0) continue;
    if (x >= total) return InvalidArgumentError("shuffle position " + std::to_string(x) + " past the epoch");
    const size_t i = size_t(std::upper_bound(out.part_begin_.begin(), out.part_begin_.end(), x) - out.part_begin_.begin()) - 1;
    needed[i] = 1;
    lo[i] = std::min(lo[i], x - out.part_begin_[i]);
    hi[i] = std::max(hi[i], x - out.part_begin_[i] + 1);
  }
  out.parts_.resize(size_t(C));
  const BlockRange br = BlockBounds(block);
  Py1eScratch scratch;
  for (int64_t i = 0; i < C; ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    const int64_t n = out.part_begin_[size_t(i) + 1] - out.part_begin_[size_t(i)];
    if (algo == ShuffleAlgo::kPy1e) {
      if (needed[size_t(i)]) {
        out.parts_[size_t(i)].resize(size_t(n));
        int64_t* ids = out.parts_[size_t(i)].data();
        SLUICE_RETURN_IF_ERROR(Py1eDraw(list, br, ep, ids, scratch, C, &out.py1e_narrow_block_));
        Py1eSort(n, ids, scratch, lo[size_t(i)], hi[size_t(i)]);
      } else {
        SLUICE_RETURN_IF_ERROR(Py1eSkipPart(list, br, ep, C, &out.py1e_narrow_block_));
      }
      continue;
    }
    // py1s: each span's ids shuffled in place.
    if (needed[size_t(i)]) {
      auto& v = out.parts_[size_t(i)];
      v.reserve(size_t(n));
      for (const Span& s : list) {
        const size_t at = v.size();
        for (int64_t id = s.begin; id < s.end; ++id) v.push_back(id);
        ep.Shuffle(std::span<int64_t>(v.data() + at, size_t(s.size())));
      }
    } else {
      for (const Span& s : list)
        for (int64_t k = s.size() - 1; k > 0; --k) ep.Interval(uint64_t(k));
    }
  }
  return out;
}

}  // namespace sluice::planner

#include "engine/planner/shuffle.h"

#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/plan_cancel.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {

Result<ShuffleAlgo> ParseShuffleAlgo(std::string_view name) {
  if (name == "naive") return ShuffleAlgo::kNaive;
  if (name == "py1b") return ShuffleAlgo::kPy1b;
  if (name == "py1br") return ShuffleAlgo::kPy1br;
  if (name == "py1e") return ShuffleAlgo::kPy1e;
  if (name == "py1s") return ShuffleAlgo::kPy1s;
  if (name == "py2s") return ShuffleAlgo::kPy2s;
  return MosaicKeyError(name);
}

std::string_view ShuffleAlgoName(ShuffleAlgo algo) {
  switch (algo) {
    case ShuffleAlgo::kNaive: return "naive";
    case ShuffleAlgo::kPy1b: return "py1b";
    case ShuffleAlgo::kPy1br: return "py1br";
    case ShuffleAlgo::kPy1e: return "py1e";
    case ShuffleAlgo::kPy1s: return "py1s";
    case ShuffleAlgo::kPy2s: return "py2s";
  }
  return "?";
}

DividedSpans ShuffledParts(std::span<const int64_t> units, int64_t C, uint64_t seed, numpy::Generator& ep) {
  std::vector<Span> spans = UnitSpans(units);
  numpy::Generator run = MakeRng(seed);
  run.Shuffle(spans);
  DividedSpans parts = DivideSpans(spans, C);
  for (int64_t i = 0; i < C; ++i) {
    ep.Shuffle(std::span<Span>(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]));
  }
  return parts;
}

BlockRange BlockBounds(int64_t block) {
  const double b = static_cast<double>(block);
  return {static_cast<int64_t>(0.75 * b), static_cast<int64_t>(1.25 * b)};
}

Status IntegersError(int64_t low, int64_t high) {
  return MosaicValueError("high <= low in integers(" + std::to_string(low) + ", " + std::to_string(high) +
                          "): the shuffle block size is too small");
}

Result<int64_t> CheckShuffleArgs(std::span<const int64_t> units, int64_t C, int64_t block) {
  if (C <= 0) return MosaicValueError("num_canonical_nodes must be positive, got " + std::to_string(C));
  if (block > kMaxPlanElements) {
    return MosaicValueError("shuffle_block_size " + std::to_string(block) + " is too large");
  }
  int64_t total = 0;
  for (int64_t u : units) {
    if (u < 0) return MosaicValueError("negative shuffle unit size " + std::to_string(u));
    total += u;
    if (total > kMaxPlanElements) return CheckProduct({total});
  }
  SLUICE_RETURN_IF_ERROR(CheckCanonicalNodes(C, total));
  return total;
}

Result<std::vector<int64_t>> GetShuffle(ShuffleAlgo algo, std::span<const int64_t> units, int64_t C,
                                        uint64_t seed, uint64_t epoch, int64_t block, const std::atomic<bool>* cancel) {
  SLUICE_ASSIGN_OR_RETURN(const int64_t total, CheckShuffleArgs(units, C, block));
  SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
  switch (algo) {
    case ShuffleAlgo::kNaive: {
      std::vector<int64_t> perm = ShuffleNaive(total, seed, epoch);
      SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
      return perm;
    }
    case ShuffleAlgo::kPy1s: return ShufflePy1s(units, C, seed, epoch);
    case ShuffleAlgo::kPy2s: return ShufflePy2s(units, C, seed, epoch, cancel);
    case ShuffleAlgo::kPy1b: return ShufflePy1b(units, C, seed, epoch, block, cancel);
    case ShuffleAlgo::kPy1br: return ShufflePy1br(units, C, seed, epoch, block, cancel);
    case ShuffleAlgo::kPy1e: return ShufflePy1e(units, C, seed, epoch, block);
  }
  return InternalError("unknown shuffle algorithm");
}

}  // namespace sluice::planner

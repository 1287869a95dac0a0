// py2s: units shuffled (and their ids) once per run with default_rng(seed),
// split into canonical-node parts, then shuffled again per epoch.
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

Result<std::vector<int64_t>> ShufflePy2s(std::span<const int64_t> units, int64_t C, uint64_t seed, uint64_t epoch,
                                         const std::atomic<bool>* cancel) {
  std::vector<Span> spans = UnitSpans(units);
  numpy::Generator fixed = MakeRng(seed);
  fixed.Shuffle(spans);
  int64_t total = 0;
  for (int64_t u : units) total += u;
  // Lay the units out in their run order, each one's ids shuffled; from now on
  // a span is a range of positions in `run`.
  std::vector<int64_t> run(static_cast<size_t>(total));
  std::vector<Span> pieces;
  pieces.reserve(spans.size());
  int64_t at = 0;
  for (const Span& s : spans) {
    for (int64_t id = s.begin; id < s.end; ++id) run[size_t(at + id - s.begin)] = id;
    fixed.Shuffle(std::span<int64_t>(run.data() + at, size_t(s.size())));
    pieces.push_back({at, at + s.size()});
    at += s.size();
  }
  DividedSpans parts = DivideSpans(pieces, C);
  numpy::Generator ep = MakeRng(seed, epoch);
  std::vector<int64_t> out(static_cast<size_t>(total));
  size_t o = 0;
  for (int64_t i = 0; i < C; ++i) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    std::span<Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                         parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    ep.Shuffle(list);
    for (const Span& s : list) {
      int64_t* begin = out.data() + o;
      for (int64_t k = s.begin; k < s.end; ++k) out[o++] = run[size_t(k)];
      ep.Shuffle(std::span<int64_t>(begin, size_t(s.size())));
    }
  }
  return out;
}

}  // namespace sluice::planner

// per_stream: every global batch comes from one stream; the order of streams
// over batches is a shuffled list of origins.
#include <string>

#include "engine/planner/batching.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"

namespace sluice::planner {

Result<WorkArray> BatchPerStream(const BatchContext& ctx) {
  const int64_t G = ctx.B() * ctx.R() * ctx.P();
  const int64_t S = int64_t(ctx.request.streams.size());
  std::vector<std::vector<int64_t>> kept(static_cast<size_t>(S));
  std::vector<int64_t> origins;
  for (int64_t s = 0; s < S; ++s) {
    SLUICE_ASSIGN_OR_RETURN(WorkArray x, StreamWork(ctx, s, ctx.P(), ctx.B()));
    std::vector<int64_t> seq = TraversalOrder(x);
    const int64_t rows = int64_t(seq.size()) / G;
    int64_t full = 0;
    for (int64_t r = 0; r < rows; ++r) {
      bool pad = false;
      for (int64_t i = 0; i < G && !pad; ++i) pad = seq[size_t(r * G + i)] == -1;
      full += !pad;
    }
    if (full == 0) {
      return MosaicValueError("Stream " + std::to_string(s) + " does not have enough samples to fill one global batch of " +
                              std::to_string(G) + " for the per_stream batching method");
    }
    seq.resize(size_t(full * G));
    kept[size_t(s)] = std::move(seq);
    origins.insert(origins.end(), size_t(full), s);
  }
  const PlanRequest& q = ctx.request;
  numpy::Generator rng = ctx.derived.epoch_seed_change ? MakeRng(q.config.shuffle_seed, uint64_t(q.epoch))
                                                       : MakeRng(q.config.shuffle_seed);
  rng.Shuffle(origins);
  std::vector<int64_t> out;
  out.reserve(origins.size() * size_t(G));
  std::vector<size_t> next(static_cast<size_t>(S), 0);
  for (int64_t s : origins) {
    const auto& src = kept[size_t(s)];
    const size_t at = next[size_t(s)]++ * size_t(G);
    out.insert(out.end(), src.begin() + ptrdiff_t(at), src.begin() + ptrdiff_t(at) + G);
  }
  return FinishRows(ctx, std::move(out));
}

}  // namespace sluice::planner

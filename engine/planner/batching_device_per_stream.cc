// device_per_stream: every device batch comes from one stream; each physical
// node draws from its own canonical nodes.
#include <algorithm>
#include <string>

#include "engine/planner/batching.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"

namespace sluice::planner {

Result<WorkArray> BatchDevicePerStream(const BatchContext& ctx) {
  const int64_t P = ctx.P(), R = ctx.R(), W = ctx.W(), B = ctx.B(), C = ctx.C();
  if (C % P != 0) {
    return MosaicValueError("For device_per_stream batching, num_canonical_nodes (" + std::to_string(C) +
                            ") must be divisible by the number of physical nodes (" + std::to_string(P) + ")");
  }
  const size_t S = ctx.request.streams.size();
  const int64_t k = C / P;
  // node_batches[p][s]: node p's kept device batches from stream s, flattened.
  std::vector<std::vector<std::vector<int64_t>>> node_batches(static_cast<size_t>(P), std::vector<std::vector<int64_t>>(S));
  for (size_t s = 0; s < S; ++s) {
    SLUICE_ASSIGN_OR_RETURN(WorkArray x, StreamWork(ctx, int64_t(s), C, 1));
    for (int64_t p = 0; p < P; ++p) {
      std::vector<int64_t> seq;
      for (int64_t b = 0; b < x.batches(); ++b)
        for (int64_t w = 0; w < W; ++w)
          for (int64_t c = p * k; c < (p + 1) * k; ++c)
            for (int64_t r = 0; r < R; ++r) seq.push_back(x.At(c, r, w, b, 0));
      seq.insert(seq.end(), size_t(B - int64_t(seq.size()) % B), -1);
      const int64_t batches = int64_t(seq.size()) / B;
      int64_t full = 0;
      for (int64_t i = 0; i < batches; ++i) {
        const auto begin = seq.begin() + ptrdiff_t(i * B);
        full += std::find(begin, begin + B, -1) == begin + B;
      }
      if (full == 0) {
        return MosaicValueError("Stream " + std::to_string(s) + " does not have enough samples on node " +
                                std::to_string(p) + " to fill one device batch of " + std::to_string(B));
      }
      seq.resize(size_t(full * B));
      node_batches[size_t(p)][s] = std::move(seq);
    }
  }
  int64_t D = 0;
  for (int64_t p = 0; p < P; ++p) {
    int64_t count = 0;
    for (size_t s = 0; s < S; ++s) count += int64_t(node_batches[size_t(p)][s].size()) / B;
    D = std::max(D, count);
  }
  D += P * R - D % (P * R);
  const PlanRequest& q = ctx.request;
  numpy::Generator rng = ctx.derived.epoch_seed_change ? MakeRng(q.config.shuffle_seed, uint64_t(q.epoch))
                                                       : MakeRng(q.config.shuffle_seed);
  // per_node[p]: D device batches (B ids each), -1 batches at the end.
  std::vector<std::vector<int64_t>> per_node(static_cast<size_t>(P));
  for (int64_t p = 0; p < P; ++p) {
    std::vector<int64_t> origins;
    for (size_t s = 0; s < S; ++s)
      origins.insert(origins.end(), node_batches[size_t(p)][s].size() / size_t(B), int64_t(s));
    rng.Shuffle(origins);
    std::vector<size_t> next(S, 0);
    auto& out = per_node[size_t(p)];
    out.reserve(size_t(D * B));
    for (int64_t s : origins) {
      const auto& src = node_batches[size_t(p)][size_t(s)];
      const size_t at = next[size_t(s)]++ * size_t(B);
      out.insert(out.end(), src.begin() + ptrdiff_t(at), src.begin() + ptrdiff_t(at) + B);
    }
    out.resize(size_t(D * B), -1);
  }
  std::vector<int64_t> rows;
  rows.reserve(size_t(P * D * B));
  for (int64_t d = 0; d < D; ++d)
    for (int64_t p = 0; p < P; ++p) {
      const auto begin = per_node[size_t(p)].begin() + ptrdiff_t(d * B);
      rows.insert(rows.end(), begin, begin + B);
    }
  return FinishRows(ctx, std::move(rows));
}

}  // namespace sluice::planner

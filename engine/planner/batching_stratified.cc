// stratified: every global batch holds a fixed number of samples per stream.
#include <algorithm>
#include <numeric>
#include <string>

#include "engine/planner/batching.h"
#include "engine/planner/mosaic_error.h"

namespace sluice::planner {

Result<WorkArray> BatchStratified(const BatchContext& ctx) {
  const int64_t G = ctx.B() * ctx.R() * ctx.P();
  const size_t S = ctx.request.streams.size();
  const auto& weights = ctx.derived.weighting.streams;
  std::vector<int64_t> q(S);
  int64_t sum = 0;
  for (size_t s = 0; s < S; ++s) {
    q[s] = static_cast<int64_t>(weights[s].proportion * static_cast<double>(G));
    sum += q[s];
  }
  if (sum != G) {
    std::vector<double> left(S);
    for (size_t s = 0; s < S; ++s) left[s] = static_cast<double>(G) * weights[s].proportion - static_cast<double>(q[s]);
    std::vector<size_t> order(S);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return left[a] < left[b]; });
    std::reverse(order.begin(), order.end());
    for (int64_t i = 0; i < G - sum && size_t(i) < S; ++i) ++q[order[size_t(i)]];
  }
  for (size_t s = 0; s < S; ++s) {
    if (q[s] <= 0) {
      // Mosaic's text (users match it).
      return MosaicValueError("Number of samples for stream " + std::to_string(s) + " is " +
                              std::to_string(q[s]) +
                              " because the portion of this stream in the global batch, which is "
                              "of size " + std::to_string(G) + ", is too low. Please increase the "
                              "global batch size or increase the proportion of total samples that "
                              "come from stream " + std::to_string(s) + ".");
    }
  }
  std::vector<std::vector<int64_t>> seqs(S);
  int64_t m = -1;
  for (size_t s = 0; s < S; ++s) {
    SLUICE_ASSIGN_OR_RETURN(WorkArray x, StreamWork(ctx, int64_t(s), 1, 1));
    std::vector<int64_t> seq = TraversalOrder(x);
    const int64_t rows = (int64_t(seq.size()) + q[s] - 1) / q[s];
    seq.resize(size_t(rows * q[s]), -1);
    int64_t full = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const auto begin = seq.begin() + ptrdiff_t(r * q[s]);
      full += std::find(begin, begin + q[s], -1) == begin + q[s];
    }
    m = m < 0 ? full : std::min(m, full);
    seqs[s] = std::move(seq);
  }
  std::vector<int64_t> out;
  out.reserve(size_t(m * G));
  for (int64_t j = 0; j < m; ++j)
    for (size_t s = 0; s < S; ++s) {
      const auto begin = seqs[s].begin() + ptrdiff_t(j * q[s]);
      out.insert(out.end(), begin, begin + q[s]);
    }
  return FinishRows(ctx, std::move(out));
}

}  // namespace sluice::planner

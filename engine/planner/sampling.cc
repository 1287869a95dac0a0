#include "engine/planner/sampling.h"

#include <algorithm>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {

Result<std::vector<int64_t>> GetSampling(std::span<const int64_t> sizes, int64_t choose, int64_t g,
                                         uint64_t seed, uint64_t epoch, bool use_epoch) {
  if (choose < 0) return MosaicValueError("choose must be non-negative, got " + std::to_string(choose));
  if (g <= 0) return MosaicValueError("sampling_granularity must be positive, got " + std::to_string(g));
  int64_t N = 0;
  for (int64_t s : sizes) {
    if (s < 0) return MosaicValueError("negative shard size " + std::to_string(s));
    N += s;
    if (N > kMaxPlanElements) return CheckProduct({N});
  }
  if (N == 0) return MosaicValueError("cannot sample from a stream without samples");
  std::vector<int64_t> out(sizes.size());
  const int64_t whole = choose / N, rem = choose % N;
  for (size_t s = 0; s < sizes.size(); ++s) out[s] = sizes[s] * whole;
  if (rem == 0) return out;
  // Picks of g samples, shard by shard; the last pick of a shard is short.
  std::vector<int64_t> pick_shard;
  std::vector<int64_t> pick_size;
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t picks = (sizes[s] + g - 1) / g;
    for (int64_t p = 0; p < picks; ++p) {
      pick_shard.push_back(int64_t(s));
      pick_size.push_back(p + 1 < picks ? g : sizes[s] - (picks - 1) * g);
    }
  }
  numpy::Generator rng = use_epoch ? MakeRng(seed, epoch) : MakeRng(seed);
  const std::vector<int64_t> order = rng.Permutation(int64_t(pick_shard.size()));
  int64_t left = rem;
  for (int64_t p : order) {
    const int64_t take = std::min(left, pick_size[size_t(p)]);
    out[size_t(pick_shard[size_t(p)])] += take;
    left -= take;
    if (left == 0) break;
  }
  return out;
}

int64_t Resampled::size() const {
  int64_t n = 0;
  for (int64_t u : shuffle_units) n += u;
  return n;
}

Result<Resampled> ResampleStreams(std::span<const ResampleStream> streams, const ResampleOptions& o) {
  numpy::Generator rng = o.balanced ? MakeRng(o.seed, o.epoch) : MakeRng(o.seed);
  Resampled out;
  // Identity unless some shard is taken other than exactly once.
  bool identity = streams.empty() || streams[0].first_id == 0;
  std::vector<std::vector<int64_t>> counts;
  counts.reserve(streams.size());
  int64_t expect_next = 0;
  for (const ResampleStream& s : streams) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> c,
                            GetSampling(s.shard_sizes, s.choose, o.granularity, o.seed, o.epoch,
                                        o.epoch_seed_change));
    if (s.first_id != expect_next) identity = false;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i] != s.shard_sizes[i]) identity = false;
      expect_next += s.shard_sizes[i];
    }
    counts.push_back(std::move(c));
  }
  if (identity) {
    for (const ResampleStream& s : streams)
      out.shuffle_units.insert(out.shuffle_units.end(), s.shard_sizes.begin(), s.shard_sizes.end());
    out.identity = true;
    return out;
  }
  int64_t total = 0;
  for (const auto& c : counts)
    for (int64_t v : c) total += v;
  SLUICE_RETURN_IF_ERROR(CheckProduct({total}));
  out.small_per_big.reserve(size_t(total));
  for (size_t si = 0; si < streams.size(); ++si) {
    const ResampleStream& s = streams[si];
    int64_t off = s.first_id;
    for (size_t i = 0; i < s.shard_sizes.size(); ++i) {
      const int64_t n = s.shard_sizes[i], c = counts[si][i];
      if (n == 0) continue;  // nothing to take (c is 0 too)
      for (int64_t k = 0; k < c / n; ++k) {
        out.shuffle_units.push_back(n);
        for (int64_t id = 0; id < n; ++id) out.small_per_big.push_back(off + id);
      }
      if (c % n) {
        out.shuffle_units.push_back(c % n);
        SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> keep, rng.Choice(n, c % n));
        std::sort(keep.begin(), keep.end());
        for (int64_t id : keep) out.small_per_big.push_back(off + id);
      }
      off += n;
    }
  }
  return out;
}

}  // namespace sluice::planner

#include <string>

#include "engine/planner/batching.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/shuffle.h"

namespace sluice::planner {

Result<Resampled> Resample(const BatchContext& ctx, int64_t stream) {
  const PlanRequest& q = ctx.request;
  std::vector<ResampleStream> streams;
  for (size_t i = 0; i < q.streams.size(); ++i) {
    if (stream >= 0 && int64_t(i) != stream) continue;
    streams.push_back({q.streams[i].shard_sizes, ctx.derived.stream_first_id[i],
                       ctx.derived.weighting.streams[i].choose});
  }
  ResampleOptions o;
  o.seed = q.config.shuffle_seed;
  o.epoch = uint64_t(q.epoch);
  o.granularity = q.config.sampling_granularity;
  o.balanced = q.config.sampling_method == SamplingMethod::kBalanced;
  o.epoch_seed_change = ctx.derived.epoch_seed_change;
  return ResampleStreams(streams, o);
}

void MapSmall(std::vector<int64_t>& ids, const Resampled& r) {
  if (!r.identity) MapThrough(ids, r.small_per_big);
}

Result<WorkArray> StreamWork(const BatchContext& ctx, int64_t stream, int64_t P, int64_t B) {
  const PlanConfig& c = ctx.request.config;
  SLUICE_ASSIGN_OR_RETURN(Resampled res, Resample(ctx, stream));
  PartitionArgs pa;
  pa.num_samples = res.size();
  pa.num_canonical_nodes = ctx.C();
  pa.num_physical_nodes = P;
  pa.ranks_per_node = ctx.R();
  pa.workers_per_rank = ctx.W();
  pa.batch_size = B;
  pa.drop_first = 0;
  pa.initial_physical_nodes = c.initial_physical_nodes;
  SLUICE_ASSIGN_OR_RETURN(WorkArray x, GetPartitions(c.partition_algo, pa));
  if (c.shuffle) {
    const double p = ctx.derived.weighting.streams[size_t(stream)].proportion;
    const int64_t block = static_cast<int64_t>(static_cast<double>(ctx.derived.shuffle_block_size) * p);
    if (block <= 0 && ctx.request.config.batching_method == BatchingMethod::kDevicePerStream) {
      return MosaicValueError("Shuffle block size for stream " + std::to_string(stream) +
                              " is 0: increase shuffle_block_size or the stream's proportion");
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                            GetShuffle(c.shuffle_algo, res.shuffle_units, ctx.C(), c.shuffle_seed,
                                       uint64_t(ctx.request.epoch), block));
    MapThrough(x.ids, perm);
  }
  MapSmall(x.ids, res);
  return x;
}

Result<WorkArray> FinishRows(const BatchContext& ctx, std::vector<int64_t> rows) {
  const int64_t P = ctx.P(), R = ctx.R(), W = ctx.W(), B = ctx.B();
  const int64_t G = B * R * P;
  int64_t n = int64_t(rows.size()) / G;
  const int64_t drop = std::min(ctx.request.sample_in_epoch / G, n);
  n -= drop;
  const int64_t padded = (n + W - 1) / W * W;
  const int64_t NB = padded / W;
  WorkArray work;
  work.shape = {P, R, W, NB, B};
  work.ids.assign(size_t(padded * G), -1);
  const int64_t* src = rows.data() + drop * G;
  for (int64_t row = 0; row < n; ++row) {
    const int64_t b = row / W, w = row % W;
    for (int64_t p = 0; p < P; ++p)
      for (int64_t r = 0; r < R; ++r) {
        const int64_t* seg = src + row * G + (p * R + r) * B;
        std::copy(seg, seg + B, &work.At(p, r, w, b, 0));
      }
  }
  return work;
}

}  // namespace sluice::planner

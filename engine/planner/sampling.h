// Mosaic's per-epoch stream resampling: get_sampling (how many samples each
// shard of a stream contributes) and resample_streams (the shuffle units and
// the big id -> global sample id table). Spec: README section 3.4.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace sluice::planner {

// get_sampling(samples_per_shard, choose, granularity, seed, epoch, use_epoch).
// Errors (ValueError): negative choose/seed/epoch, granularity <= 0, no samples.
Result<std::vector<int64_t>> GetSampling(std::span<const int64_t> samples_per_shard, int64_t choose,
                                         int64_t granularity, uint64_t seed, uint64_t epoch, bool use_epoch);

// One stream as the resampler sees it.
struct ResampleStream {
  std::span<const int64_t> shard_sizes;  // this stream's shards
  int64_t first_id = 0;                  // global id of its first sample
  int64_t choose = 0;                    // samples per epoch (from weighting)
};

struct Resampled {
  std::vector<int64_t> shuffle_units;  // sizes handed to the shuffle
  // big id -> global sample id. Empty means the identity (no resampling was
  // needed and first_id of the first stream is 0), saving a table of the
  // epoch's size.
  std::vector<int64_t> small_per_big;
  bool identity = false;
  int64_t size() const;  // number of big ids
};

struct ResampleOptions {
  uint64_t seed = 9176;
  uint64_t epoch = 0;
  int64_t granularity = 1;
  bool balanced = true;         // sampling_method == "balanced"
  bool epoch_seed_change = true;  // use_epoch for get_sampling
};

// resample_streams(epoch[, stream]) over `streams` (all of them for random
// batching, one for the per-stream methods): one generator for the call.
Result<Resampled> ResampleStreams(std::span<const ResampleStream> streams, const ResampleOptions& options);

}  // namespace sluice::planner

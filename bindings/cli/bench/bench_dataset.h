// What the bench knows about a dataset's shards from its streams' indexes:
// the bytes a cold cache downloads (the stored, possibly compressed files)
// and holds (the raw files), per global shard (streams in order, as the
// planner numbers them). Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "bindings/cli/bench/bench_options.h"
#include "engine/dataset/streaming_dataset.h"

namespace sluice::bench {

struct ShardBytes {
  uint64_t stored = 0;  // downloaded: zip_data when compressed, else raw_data (+ meta)
  uint64_t cached = 0;  // held in the cache: raw_data (+ raw_meta)
  uint64_t samples = 0;
};

// Every stream's shards as `dataset` loaded them (an index.json, a
// listing, Parquet footers: LoadStreamIndex decides).
std::vector<ShardBytes> ShardBytesOf(const StreamingDataset& dataset);

}  // namespace sluice::bench

// Why a dataset's consumer waited: each wait for a shard split by what the
// shard's open was doing at the time (its ShardOpenTiming), so a user sees
// whether the link, another process, the cache limit or decoding held the
// training loop.
//
// A wait from `start` to `end` for a shard whose open ran its steps in
// order (peer fetch, room, download, decode: opened_shard.h) is split by
// overlap with those steps laid end to end from the open's start; time
// before the open began (the prefetcher was opening other shards first)
// or after it ended (the hand-over) is `other`. A shard found in the
// cache opens in its decode step alone.
//
// Plain values: the consumer's thread adds into its own, and the dataset
// publishes them (streaming_dataset.h).
#pragma once

#include <chrono>
#include <cstdint>

#include "engine/dataset/opened_shard.h"

namespace sluice {

struct ConsumerWaits {
  uint64_t total_ns = 0;
  uint64_t download_ns = 0;       // this process downloading the shard
  uint64_t peer_download_ns = 0;  // another process (of the node) downloading it
  uint64_t cache_room_ns = 0;     // waiting for room under cache_limit
  uint64_t decode_ns = 0;         // decompressing, hash checks, mapping, opening it
  uint64_t other_ns = 0;          // the rest (see above)

  // Adds a wait; `timing` null: all of it is `other`.
  void Add(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end,
           const ShardOpenTiming* timing);
  // Adds `ns` of waiting on a download (a peek at the remote).
  void AddDownload(uint64_t ns) {
    total_ns += ns;
    download_ns += ns;
  }
  void Add(const ConsumerWaits& other);
};

}  // namespace sluice

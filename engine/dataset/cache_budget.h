// What cache_limit has to hold: the room each shard file takes in a stream's
// cache folder, and the least room one reader needs at once.
//
// A shard file (a cache entry) keeps `kept` bytes on disk while present: its
// raw file, plus its compressed file when keep_zip keeps it. While it is
// fetched it takes `fetching` bytes: the raw temp file plus, for a
// compressed shard, the compressed download beside it.
//
// The minimal working set of one reader: a reader waits for a shard only when
// it pins nothing else of its own (NextBatch never waits while holding the
// shards of the same call, and by then the prefetcher has released every
// shard behind the consumer). Opening one shard fetches its data file, then,
// with the data file pinned, its meta file (JSONL/XSV). So one reader needs
// max over shards of max(data.fetching, data.kept + meta.fetching) bytes.
// Several readers on a node share the cache and take turns.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

#include "formats/index/shard_table.h"

namespace sluice {

struct EntryCost {
  uint64_t kept = 0;
  uint64_t fetching = 0;
};

// The cost of shard `e`'s data file and of its meta file ({0, 0} when none).
EntryCost DataCost(const ShardRef& e, bool keep_zip);
EntryCost MetaCost(const ShardRef& e, bool keep_zip);

struct WorkingSet {
  uint64_t bytes = 0;  // the least room one reader needs
  size_t shard = 0;    // the shard that needs it
};
WorkingSet MinimalWorkingSet(const ShardTable& index, bool keep_zip);

// "shard 3 'a.mds' (raw 100 bytes, compressed 40 bytes downloaded beside it,
// meta 'a.meta' ...)": what the working set of shard `i` is made of.
std::string DescribeWorkingSet(const ShardTable& index, size_t i, bool keep_zip);

// The room that caches the whole stream: every shard file kept, while any
// one shard is fetched again (its download beside it): the sum of the kept
// bytes plus the most any shard's fetch needs beyond what it keeps.
uint64_t StreamWholeBytes(const ShardTable& index, bool keep_zip);

// Mosaic's own two checks of cache_limit, before anything is fetched, with
// its texts (users match them): the limit must be above the streams'
// index.json files together (`index_bytes`), and at least four times the
// largest shard of any stream (its files decompressed and compressed
// together, as Mosaic's get_max_size). Errors are Mosaic's ValueError
// (planner::MosaicValueError). The one owner of those rules: the Python
// package asks for them (DatasetOptions::mosaic_cache_limit_checks).
Status CheckMosaicCacheLimit(uint64_t limit, uint64_t index_bytes,
                             const std::vector<const ShardTable*>& indexes);

// One limit over all streams' cache folders (as Mosaic's cache_limit), held
// by giving each cached stream a fixed share: first its minimal working set,
// then what is left in proportion to the rest of the stream's size (a share
// never exceeds what caching the whole stream takes). The shares add up to at most
// `limit`, so the folders together never pass it.
struct StreamBudget {
  bool cached = false;    // has a remote (local-only streams are read in place)
  uint64_t kept = 0;      // StreamWholeBytes
  WorkingSet minimal;     // MinimalWorkingSet
  std::string describe;   // for errors: "stream 1 (/cache/b)"
};
// Per stream: its share, nullopt for streams that are not cached. Errors
// (kInvalidArgument): the limit is smaller than the sum of the cached
// streams' minimal working sets (the message lists them).
Result<std::vector<std::optional<uint64_t>>> SplitCacheLimit(uint64_t limit,
                                                             const std::vector<StreamBudget>& streams);

}  // namespace sluice

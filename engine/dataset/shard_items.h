// Which of a stream's cache entries hold each shard's files, and which file
// each entry is: the one numbering StreamShards and its cache share.
//
// Entry numbers are dense: each shard's data file, then its meta file when
// its format has one; row groups of a Parquet file read in place (not cut
// into pieces) share their file's one entry. The common layouts keep no
// table at all: a shard per entry (MDS, Parquet pieces, raw files), or a
// data and a meta entry per shard (JSONL, CSV). Only a mix keeps per-shard
// numbers (at a million shards, 24 MB a process the others save).
//
// Immutable once made: any thread may read it.

#ifndef SLUICE_ENGINE_DATASET_SHARD_ITEMS_H_
#define SLUICE_ENGINE_DATASET_SHARD_ITEMS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/shard_table.h"

namespace sluice {

class ShardItems {
 public:
  // The entries of `index`'s shards. Fails as RequiredMetaFileOf (naming
  // `index_json`) for a shard whose format has a meta file it lacks.
  static Result<ShardItems> Of(const ShardTable& index, std::string_view index_json);

  // Entries in all.
  size_t size() const { return num_entries_; }
  // Shard `shard`'s data file's entry.
  size_t data(size_t shard) const;
  // Shard `shard`'s meta file's entry, -1 when it has none.
  int64_t meta(size_t shard) const;
  // Entry `k`'s file: its shard << 1, | 1 when it is that shard's meta file.
  uint64_t source(size_t k) const;

  // Whether the entries are numbered without a per-shard table (for tests).
  bool computed() const { return layout_ != Layout::kListed; }

 private:
  enum class Layout { kOnePerShard, kDataAndMeta, kListed };

  Layout layout_ = Layout::kOnePerShard;
  size_t num_entries_ = 0;
  // kListed only.
  std::vector<uint64_t> sources_;
  std::vector<size_t> data_;
  std::vector<int64_t> meta_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_DATASET_SHARD_ITEMS_H_

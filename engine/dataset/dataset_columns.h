// The columns of a dataset whose streams may have different ones, as
// Mosaic's may (each of its samples is a dict of its own shard's columns):
// the dataset's columns are every stream's names, first seen first (stream
// 0's in its order, then the names later streams add), and a sample's fields
// are laid out by them, a column its stream lacks being an empty view with
// a null data pointer.
//
// Immutable once built; Read may be called from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/dataset/opened_shard.h"
#include "formats/dataset/shard_view.h"

namespace sluice {

class DatasetColumns {
 public:
  // Appends the next stream's column names, in its shards' order (empty
  // for a stream without shards). A name twice in one stream is the index's
  // fault: kCorrupt naming it.
  Status AddStream(const std::vector<std::string>& names);
  // After the last AddStream: each stream's first global shard and the
  // total last, to find the stream of a shard (see StreamOfShard).
  void SetStreamFirstShards(std::vector<size_t> first_shard) {
    first_shard_ = std::move(first_shard);
  }

  // The dataset's columns.
  const std::vector<std::string>& names() const { return names_; }
  // Stream `s`'s own columns, in its shards' order, and the dataset column
  // of each. s < the streams added.
  const std::vector<std::string>& stream_names(size_t s) const { return streams_[s].names; }
  const std::vector<uint32_t>& stream_columns(size_t s) const { return streams_[s].columns; }
  // Whether stream `s` has dataset column `c`.
  bool StreamHas(size_t s, size_t c) const { return streams_[s].position[c] != kAbsent; }

  // Sample `i` of global shard `g` (opened as `shard`) into `out`, its
  // fields laid out by the dataset's columns (`out->where` is left alone).
  Status Read(const OpenedShard& shard, size_t g, uint32_t i, SampleFields* out) const;
  // Moves out->fields, a sample of global shard `g` in its stream's own
  // column order (as its shards store them), to the dataset's places.
  void LayOut(size_t g, SampleFields* out) const;

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  struct Stream {
    std::vector<std::string> names;
    std::vector<uint32_t> columns;   // dataset column of each of names
    std::vector<uint32_t> position;  // per dataset column: its index in names, or kAbsent
    bool same_as_dataset = false;    // names == the dataset's names: no reordering
  };
  std::vector<std::string> names_;
  std::vector<Stream> streams_;
  std::vector<size_t> first_shard_;
};

}  // namespace sluice

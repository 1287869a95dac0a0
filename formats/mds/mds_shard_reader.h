// Reads samples out of one whole, decompressed MDS shard held in memory.
//
// Layout (tests/data/mosaic/mds/README.md, "MDS shard file"): u32 n,
// u32 offsets[n+1], the config JSON, then the samples; each sample is one
// u32 length per variable-size column followed by the column payloads in
// column order.
//
// The reader does not own the shard bytes: the caller keeps them alive (a
// mapped file, a cache buffer) for as long as the reader and every view it
// returned are used. Open() validates the whole offsets table once, so every
// later call is bounded by the shard; each sample's size header is checked
// when that sample is read. Errors are kCorrupt and name the shard, the
// sample, the byte offset in the shard and what was expected.
//
// Thread safety: const methods may be called from several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// The columns of an MDS shard entry, parsed, in stored order. Checks that
// names, encodings and sizes have the same length, that names are strictly
// sorted (Mosaic sorts them) and that each column_sizes entry is what the
// encoding implies. An encoding the library does not know whose name may be
// a user's own (IsCustomEncodingName) is one (CustomColumnEncoding, sized
// by its column_sizes entry): the dataset's open already refused those its
// caller did not register (ColumnsOf). `what` names the shard in errors.
Result<std::vector<ColumnEncoding>> MdsColumnsFromEntry(const ShardEntry& entry,
                                                        std::string_view what);

// Where sample i's entry of the offsets table starts in the shard file: its
// two u32 entries, offsets[i] and offsets[i + 1], are the 8 bytes there and
// bound the sample's bytes [offsets[i], offsets[i + 1]).
constexpr uint64_t MdsOffsetEntryAt(uint32_t i) { return 4 + 4 * uint64_t{i}; }

// The end of the offsets table of a shard of `num_samples` samples (where
// the config JSON starts): no sample's bytes begin before it.
constexpr uint64_t MdsOffsetsTableEnd(uint64_t num_samples) { return 4 + 4 * (num_samples + 1); }

// Splits the bytes of one MDS sample (its size header, one u32 per
// variable-size column, then the payloads in column order) into one view
// per column of `columns` (stored order); *fields is resized to match. The
// views point into `sample`. kCorrupt when the header and column sizes do
// not exactly fill the sample, naming `shard_name`, sample `index` and the
// byte offset in the shard (`sample` starts at `offset_in_shard`).
// The one decoder of a sample's layout: MdsShardReader and readers holding a
// lone sample (a ranged read of it) both use it.
Status SplitMdsSample(std::string_view sample, const std::vector<ColumnEncoding>& columns,
                      std::string_view shard_name, uint32_t index, uint64_t offset_in_shard,
                      std::vector<std::string_view>* fields);

class MdsShardReader {
 public:
  // `shard`: the whole decompressed shard file; `shard_name` names it in
  // errors (e.g. "part0/shard.00001.mds"); `columns`: in stored order (see
  // MdsColumnsFromEntry). Checks: the file holds n and the offsets table (an
  // absurd n is refused before anything is allocated), offsets[0] is past
  // the table and the config between them is a JSON object text,
  // offsets are non-decreasing, offsets[n] equals the file size.
  static Result<MdsShardReader> Open(std::string_view shard, std::string_view shard_name,
                                     std::vector<ColumnEncoding> columns);

  uint32_t num_samples() const { return num_samples_; }
  const std::vector<ColumnEncoding>& columns() const { return columns_; }
  const std::string& shard_name() const { return shard_name_; }
  // The config JSON text stored in the shard (a view into the shard bytes).
  std::string_view config_json() const { return config_; }
  // The bytes of sample i (header included), i < num_samples().
  Result<std::string_view> SampleBytes(uint32_t i) const;

  // The stored bytes of every field of sample i, in column order: *fields
  // is resized to columns().size() (reuse the vector to avoid allocating).
  // Fields are views into the shard bytes. Checks that the size header and
  // the payloads exactly fill the sample. i >= num_samples() -> kOutOfRange.
  Status ReadSample(uint32_t i, std::vector<std::string_view>* fields) const;

  // One field of sample i (same checks as ReadSample).
  Result<std::string_view> ReadField(uint32_t i, size_t column) const;

  // Hints that sample i is read soon, for random reads that miss the CPU
  // cache. PrefetchOffsets starts loading the sample's offset entry;
  // Prefetch reads that entry and starts loading the sample's first bytes,
  // so call PrefetchOffsets some samples earlier. No effect if i is out of
  // range.
  void PrefetchOffsets(uint32_t i) const;
  void Prefetch(uint32_t i) const;

  // ReadSample on every sample; the first error.
  Status ValidateAllSamples() const;

 private:
  MdsShardReader() = default;
  std::string_view shard_;
  std::string shard_name_;
  std::vector<ColumnEncoding> columns_;
  uint32_t num_samples_ = 0;
  std::string_view config_;
};

}  // namespace sluice

// What the JSONL and CSV/TSV/XSV dataset writers share: the split shard
// format for the ShardedWriter core (formats/writer/sharded_writer.h), one
// encoded line per sample, each shard a data file (an optional header line,
// then the lines) plus a `.meta` file, byte for byte as Mosaic writes them.
// The core splits shards at size_limit with extra_per_shard =
// extra_per_sample = 0: only the sample lines count, not the header.
//
// Thread safety: a format is used by its writer's thread only.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/writer/sharded_writer.h"

namespace sluice {

class SplitShardFormat : public ShardFormat {
 public:
  // `declared`: the format's entry fields (JsonlConfigEntry or
  // XsvConfigEntry of validated options: format, columns or column names and
  // encodings, newline, separator); `header`: the line that starts every
  // data file ("" for JSONL).
  SplitShardFormat(ShardEntry declared, std::string header)
      : declared_(std::move(declared)), header_(std::move(header)) {}
  // Copies the declared fields into the core's entry and keeps the config
  // JSON every meta file ends with. kInvalidArgument for a header of 4 GiB.
  Status Configure(ShardEntry* entry) override;
  uint64_t extra_per_shard() const override { return 0; }
  uint64_t extra_per_sample() const override { return 0; }
  bool has_meta() const override { return true; }
  Result<ShardFiles> BuildShard(const ShardSamples& samples) const override;

 private:
  ShardEntry declared_;
  std::string header_;
  std::string config_json_;
};

// The core over a SplitShardFormat, writing into `out_dir` (created if
// missing) with `options`' compression, hashes and size_limit (validated
// by the core: kInvalidArgument / kUnimplemented).
inline Result<std::unique_ptr<ShardedWriter>> CreateSplitShardWriter(
    const std::string& out_dir, const ShardedWriterOptions& options, ShardEntry declared,
    std::string header) {
  return ShardedWriter::Create(
      out_dir, std::make_unique<SplitShardFormat>(std::move(declared), std::move(header)),
      options);
}

}  // namespace sluice

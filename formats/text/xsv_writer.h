// XsvWriter: writes a CSV / TSV / XSV dataset folder (shard.NNNNN.<format>
// + .meta files, index.json) byte-identical to what Mosaic's CSVWriter,
// TSVWriter and XSVWriter write for the same samples and settings
// (compressed files: identical once decompressed). Built on the
// format-independent ShardedWriter core (formats/writer/sharded_writer.h),
// which splits shards at size_limit with extra_per_shard = extra_per_sample
// = 0: only the sample lines count, not the header line.
//
// Thread safety: a writer is used by one thread at a time.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "formats/writer/sharded_writer.h"
#include "formats/text/xsv_shard_encoder.h"

namespace sluice {

// The CSV/TSV/XSV shard format for ShardedWriter: each encoded sample is one
// line (AppendXsvLine); each shard is a data file (header + lines) plus a
// meta file. `options` must be validated (ValidateXsvOptions).
class XsvShardFormat : public ShardFormat {
 public:
  explicit XsvShardFormat(XsvWriterOptions options) : options_(std::move(options)) {}
  Status Configure(ShardEntry* entry) override;
  uint64_t extra_per_shard() const override { return 0; }
  uint64_t extra_per_sample() const override { return 0; }
  bool has_meta() const override { return true; }
  Result<ShardFiles> BuildShard(const ShardSamples& samples) const override;

 private:
  XsvWriterOptions options_;
  std::string header_;
  std::string config_json_;
};

class XsvWriter {
 public:
  // Validates `options` (format, separator, newline, columns; compression,
  // hashes and size_limit as ShardedWriter does: kInvalidArgument /
  // kUnimplemented) and creates `out_dir` if missing.
  static Result<std::unique_ptr<XsvWriter>> Create(const std::string& out_dir,
                                                   XsvWriterOptions options);

  // The columns, sorted by name: the order of Write's values.
  const std::vector<TextColumn>& columns() const { return options_.columns; }

  // Adds one sample, one value per column of columns() with its type; str
  // values need only live for the call. kInvalidArgument on a type mismatch,
  // invalid UTF-8 or a str value holding the separator or the newline
  // (nothing is written then); I/O errors from writing a full shard.
  Status Write(std::span<const TextValue> values);

  // Writes the last shard and index.json.
  Status Finish();

  const ShardedWriter& core() const { return *core_; }

 private:
  XsvWriter() = default;
  XsvWriterOptions options_;
  std::string line_;  // reused buffer
  std::unique_ptr<ShardedWriter> core_;
};

}  // namespace sluice

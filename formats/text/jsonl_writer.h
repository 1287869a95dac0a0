// JsonlWriter: writes a JSONL dataset folder (shard.NNNNN.json + .meta files,
// index.json) byte-identical to what Mosaic's JSONWriter writes for the same
// samples and settings (compressed files: identical once decompressed).
// Built on the format-independent ShardedWriter core
// (formats/writer/sharded_writer.h), which splits shards at size_limit with
// extra_per_shard = extra_per_sample = 0 (only the lines count).
//
// Thread safety: a writer is used by one thread at a time.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "formats/writer/sharded_writer.h"
#include "formats/text/jsonl_shard_encoder.h"

namespace sluice {

// The JSONL shard format for ShardedWriter: each encoded sample is one line
// (AppendJsonlLine); each shard is a data file plus a meta file.
// `options` must be validated (ValidateJsonlOptions).
class JsonlShardFormat : public ShardFormat {
 public:
  explicit JsonlShardFormat(JsonlWriterOptions options) : options_(std::move(options)) {}
  Status Configure(ShardEntry* entry) override;
  uint64_t extra_per_shard() const override { return 0; }
  uint64_t extra_per_sample() const override { return 0; }
  bool has_meta() const override { return true; }
  Result<ShardFiles> BuildShard(const ShardSamples& samples) const override;

 private:
  JsonlWriterOptions options_;
  std::string config_json_;
};

class JsonlWriter {
 public:
  // Validates `options` (columns, newline; compression, hashes and
  // size_limit as ShardedWriter does: kInvalidArgument / kUnimplemented) and
  // creates `out_dir` if missing.
  static Result<std::unique_ptr<JsonlWriter>> Create(const std::string& out_dir,
                                                     JsonlWriterOptions options);

  // The columns, sorted by name: the order of Write's values.
  const std::vector<TextColumn>& columns() const { return columns_; }

  // Adds one sample, one value per column of columns() with its type; str
  // values need only live for the call. kInvalidArgument on a type mismatch
  // or invalid UTF-8 (nothing is written then); I/O errors from writing a
  // full shard.
  Status Write(std::span<const TextValue> values);

  // Writes the last shard and index.json.
  Status Finish();

  const ShardedWriter& core() const { return *core_; }

 private:
  JsonlWriter() = default;
  std::vector<TextColumn> columns_;
  std::string newline_;
  std::string line_;  // reused buffer
  std::unique_ptr<ShardedWriter> core_;
};

}  // namespace sluice

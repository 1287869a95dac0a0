// JsonlWriter: writes a JSONL dataset folder (shard.NNNNN.json + .meta files,
// index.json) byte-identical to what Mosaic's JSONWriter writes for the same
// samples and settings (compressed files: identical once decompressed).
// Built on the ShardedWriter core through the split shard format it shares
// with XsvWriter (split_shard_format.h).
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

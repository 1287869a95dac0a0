// XsvWriter: writes a CSV / TSV / XSV dataset folder (shard.NNNNN.<format>
// + .meta files, index.json) byte-identical to what Mosaic's CSVWriter,
// TSVWriter and XSVWriter write for the same samples and settings
// (compressed files: identical once decompressed). Built on the
// ShardedWriter core through the split shard format it shares with
// JsonlWriter (split_shard_format.h).
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

// Accumulates the lines of one split shard (JSONL or CSV/TSV/XSV) and turns
// them into its data and `.meta` files, byte for byte as Mosaic writes them.
//
// Not thread-safe: one builder per writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

// The uncompressed files of one split shard.
struct SplitShardFiles {
  std::string data;  // header (XSV) + lines
  std::string meta;  // u32 n, u32 offsets[n+1], config JSON
};

class SplitShardBuilder {
 public:
  // `header` starts every data file: "" for JSONL, the header line for XSV.
  explicit SplitShardBuilder(std::string header = "");

  // Appends one encoded sample line (newline included). kInvalidArgument
  // when the data file would pass 2^32 - 1 bytes (offsets are u32).
  Status AddLine(std::string_view line);

  uint32_t samples() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  // Bytes of the sample lines so far (the header is not counted): the size
  // Mosaic's split writers account against size_limit.
  uint64_t lines_bytes() const { return data_.size() - header_.size(); }

  // The files of the shard built so far, with `config_json` at the end of
  // the meta file; the builder then starts a new, empty shard.
  SplitShardFiles Finish(std::string_view config_json);

 private:
  std::string header_;
  std::string data_;
  std::vector<uint32_t> offsets_;
};

}  // namespace sluice

// What the JSONL and CSV/TSV/XSV shard readers share: a split shard's data
// file seen as the sample lines its `.meta` file delimits, with the index
// entry's columns and newline, and the checks every line gets before a
// format parses it (ends with the newline, UTF-8).
//
// Views point into the caller's data bytes and live as long as they do.
// Immutable once attached: concurrent calls from several threads are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/text/split_meta.h"
#include "formats/text/text_columns.h"

namespace sluice {

class SplitShardLines {
 public:
  // The entry's columns (sorted, see TextColumnsFromEntry) and newline
  // (default "\n"; kCorrupt when empty), before any file is read.
  static Result<SplitShardLines> Declared(const ShardEntry& entry);

  // Validates `meta` against the entry and `data` (SplitMeta::Parse, the
  // first line at `first_offset`: 0 for JSONL, the header's length for
  // XSV). `data` and `meta` must outlive this object.
  Status Attach(const ShardEntry& entry, std::string_view data, std::string_view meta,
                uint32_t first_offset);

  uint32_t size() const { return meta_.size(); }
  const std::vector<TextColumn>& columns() const { return columns_; }
  const std::string& newline() const { return newline_; }
  const std::string& data_name() const { return data_name_; }
  // Where sample i's line starts in the data file; i <= size().
  uint32_t offset(uint32_t i) const { return meta_.offset(i); }

  // Sample i's stored line, newline included. kOutOfRange when i >= size().
  Result<std::string_view> Line(uint32_t i) const;

  // Sample i's line without its newline: kCorrupt (see Where) when it does
  // not end with the shard's newline or is not UTF-8; kOutOfRange as Line.
  Result<std::string_view> Text(uint32_t i) const;

  // "<data file>: sample <i> at byte <offset>": how a sample's errors begin.
  std::string Where(uint32_t i, uint64_t offset) const;

 private:
  std::string data_name_;
  std::string_view data_;
  SplitMeta meta_;
  std::vector<TextColumn> columns_;
  std::string newline_;
};

}  // namespace sluice

// Reads one CSV / TSV / XSV split shard (`format` "csv", "tsv" or "xsv"): a
// data file with a header line (separator.join(sorted column names) +
// newline) and one line per sample (str(value) of each column joined by the
// separator, no quoting), and its `.meta` file whose offsets are absolute
// (offsets[0] == header length). See tests/data/mosaic/mds/README.md.
//
// The reader works on the whole decompressed data and meta files that the
// caller holds; it does not copy them. Every view it returns (lines, `str`
// values) points into those bytes and lives as long as they do. A reader is
// immutable after Open: concurrent calls from several threads are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/text/split_shard_lines.h"

namespace sluice {

// The separator of an XSV entry: "," for csv, "\t" for tsv, the entry's
// `separator` for xsv. kInvalidArgument for another format, kCorrupt for an
// xsv entry without a non-empty separator.
Result<std::string> XsvSeparator(const ShardEntry& entry);

class XsvShardReader {
 public:
  // Validates the meta file against `entry` (columns, newline, separator,
  // samples) and `data` (header line, offsets within the file). Sample lines
  // are checked when read. kCorrupt (kUnimplemented for an unknown column
  // encoding) naming the shard file. `data` and `meta` must outlive the reader.
  static Result<XsvShardReader> Open(const ShardEntry& entry, std::string_view data,
                                     std::string_view meta);

  uint32_t size() const { return lines_.size(); }
  // Columns in the entry's (sorted) order; Sample() values follow it.
  const std::vector<TextColumn>& columns() const { return lines_.columns(); }
  const std::string& separator() const { return separator_; }
  const std::string& newline() const { return lines_.newline(); }

  // Sample i's stored line, newline included. kOutOfRange when i >= size().
  Result<std::string_view> Line(uint32_t i) const { return lines_.Line(i); }

  // Sample i decoded, one value per column: `int` as Python int() reads it
  // (int64, or TextBigInt beyond), `float` as Python float() (see py_number_text.h), `str` as a
  // view of the stored UTF-8 text. kCorrupt naming the file, the sample, the
  // byte offset and what was expected (newline, field count, UTF-8, number);
  // kOutOfRange when i >= size().
  Result<std::vector<TextValue>> Sample(uint32_t i) const;

 private:
  XsvShardReader(SplitShardLines lines, std::string separator)
      : lines_(std::move(lines)), separator_(std::move(separator)) {}
  SplitShardLines lines_;
  std::string separator_;
};

}  // namespace sluice

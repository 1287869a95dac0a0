// Reads one JSONL split shard (`format: "json"`): a data file with one
// json.dumps(sample, sort_keys=True) + newline per sample, and its `.meta`
// file (see split_meta.h and tests/data/mosaic/mds/README.md).
//
// The reader works on the whole decompressed data and meta files that the
// caller holds (mapped or in memory); it does not copy them. Every view it
// returns points into those bytes and lives as long as they do. A reader is
// immutable after Open: concurrent calls from several threads are safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/json/py_json.h"
#include "formats/text/split_shard_lines.h"

namespace sluice {

class JsonlShardReader {
 public:
  // Validates the meta file against `entry` (columns, newline, samples) and
  // `data` (offsets within it, offsets[0] == 0). Lines themselves are checked
  // when read. kCorrupt (or kUnimplemented for an unknown column encoding)
  // naming the shard file. `data` and `meta` must outlive the reader.
  static Result<JsonlShardReader> Open(const ShardEntry& entry, std::string_view data,
                                       std::string_view meta);

  uint32_t size() const { return lines_.size(); }
  const std::vector<TextColumn>& columns() const { return lines_.columns(); }
  const std::string& newline() const { return lines_.newline(); }

  // Sample i's stored line, newline included. kOutOfRange when i >= size().
  Result<std::string_view> Line(uint32_t i) const { return lines_.Line(i); }

  // Sample i parsed: a JSON object with exactly the declared columns, each of
  // its declared type (int: a JSON integer, or true/false as Mosaic's
  // JSONWriter writes a Python bool, float: a JSON number with a
  // fraction or exponent, or NaN/Infinity, as json.dumps writes floats;
  // str: a string). Keys keep their stored order (sorted for Mosaic files).
  // kCorrupt naming the file, the sample, its byte offset and what was
  // expected; kOutOfRange when i >= size().
  Result<JsonValue> Sample(uint32_t i) const;

 private:
  explicit JsonlShardReader(SplitShardLines lines) : lines_(std::move(lines)) {}
  SplitShardLines lines_;
};

}  // namespace sluice

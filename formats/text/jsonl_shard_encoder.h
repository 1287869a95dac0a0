// Encodes Mosaic's JSONL split shards (`format: "json"`): each sample is the
// line json.dumps({column: value}, sort_keys=True) + newline; the `.meta`
// file holds u32 n, u32 offsets[n+1] (offsets[0] = 0) and the config JSON.
//
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/text/split_shard_builder.h"
#include "formats/text/text_columns.h"
#include "formats/writer/sharded_writer.h"

namespace sluice {

// Mosaic JSONWriter's settings: the sharded writer's (compression, hashes,
// size_limit) and the format's own.
struct JsonlWriterOptions : ShardedWriterOptions {
  std::vector<TextColumn> columns;          // any order; sorted when validated
  std::string newline = "\n";
};

// Sorts the columns by name and checks them (non-empty, unique, valid
// UTF-8 names) and the newline (non-empty). kInvalidArgument otherwise.
Status ValidateJsonlOptions(JsonlWriterOptions& options);

// The shard config as written into the meta file and the index entry's
// writer fields: format "json", columns, compression, hashes (sorted),
// newline, size_limit, version 2. `options` must be validated.
ShardEntry JsonlConfigEntry(const JsonlWriterOptions& options);

// Appends one sample's line to `out`. `values` follows `columns` (sorted,
// validated) and each value must hold its column's type (an `int` column
// also takes a TextBool, written true/false as json.dumps writes a Python
// bool, which Mosaic's JSONWriter accepts as an int). Floats are written
// as json.dumps writes them (repr; NaN, Infinity, -Infinity), strings with
// ensure_ascii. kInvalidArgument naming the column on a type mismatch or
// invalid UTF-8.
Status AppendJsonlLine(const std::vector<TextColumn>& columns,
                       std::span<const TextValue> values, std::string_view newline,
                       std::string& out);

// The data and meta files of one shard holding `samples` (each as for
// AppendJsonlLine), as Mosaic's JSONWriter writes them uncompressed.
// `options` must be validated.
Result<SplitShardFiles> EncodeJsonlShard(const JsonlWriterOptions& options,
                                         std::span<const std::vector<TextValue>> samples);

}  // namespace sluice

// Encodes Mosaic's CSV / TSV / XSV split shards: a header line
// (separator.join(sorted column names) + newline), then per sample the
// columns' str(value) joined by the separator + newline (no quoting). The
// `.meta` file holds u32 n, absolute u32 offsets[n+1] (offsets[0] = header
// length) and the config JSON.
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

// Mosaic CSVWriter / TSVWriter / XSVWriter settings: the sharded writer's
// (compression, hashes, size_limit) and the format's own.
struct XsvWriterOptions : ShardedWriterOptions {
  std::string format = "csv";               // "csv" (","), "tsv" ("\t") or "xsv"
  std::string separator;                    // xsv only (csv/tsv: fixed, leave empty)
  std::vector<TextColumn> columns;          // any order; sorted when validated
  std::string newline = "\n";
};

// Sorts the columns by name and checks them: a known format; for csv/tsv the
// separator is empty or the format's own (it is then filled in); for xsv a
// non-empty separator; a non-empty newline; column names non-empty, unique,
// valid UTF-8 and free of the separator and the newline. kInvalidArgument.
Status ValidateXsvOptions(XsvWriterOptions& options);

// The shard config as written into the meta file and the index entry's
// writer fields: column_encodings, column_names, compression, format, hashes
// (sorted), newline, separator (xsv only), size_limit, version 2.
// `options` must be validated.
ShardEntry XsvConfigEntry(const XsvWriterOptions& options);

// The header line of every data file. `options` must be validated.
std::string XsvHeader(const XsvWriterOptions& options);

// Appends one sample's line to `out`: str(value) per column (int: decimal,
// TextBigInt: its digits; float: Python repr, "nan", "inf", "-inf"; str:
// as is) joined by the
// separator, then the newline. `values` follows the sorted columns.
// kInvalidArgument naming the column on a type mismatch, invalid UTF-8, or a
// str value that contains the separator or the newline.
Status AppendXsvLine(const XsvWriterOptions& options, std::span<const TextValue> values,
                     std::string& out);

// The data and meta files of one shard holding `samples`, as Mosaic's XSV
// writers write them uncompressed. `options` must be validated.
Result<SplitShardFiles> EncodeXsvShard(const XsvWriterOptions& options,
                                       std::span<const std::vector<TextValue>> samples);

}  // namespace sluice

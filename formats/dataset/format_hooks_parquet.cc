// The Parquet format's descriptor functions: a shard is one row group of a
// file (ShardEntry::row_group), its columns the file's top-level fields as
// the index builder recorded them (formats/parquet/parquet_index.h), read by
// ParquetShardReader.
#include "formats/dataset/format_hooks.h"
#include "formats/parquet/field_encoding.h"
#include "formats/parquet/parquet_shard_reader.h"

namespace sluice::format_hooks {

Status ParquetColumns(const ShardEntry& entry, const CustomEncodings&,
                      std::vector<std::string>* names, std::vector<std::string>* encodings) {
  if (entry.column_names.size() != entry.column_encodings.size()) {
    return CorruptError(entry.raw_data.basename + ": " + std::to_string(entry.column_names.size()) +
                        " column names but " + std::to_string(entry.column_encodings.size()) +
                        " encodings");
  }
  for (size_t c = 0; c < entry.column_encodings.size(); ++c) {
    if (!parquet::IsParquetFieldEncoding(entry.column_encodings[c])) {
      return UnimplementedError(entry.raw_data.basename + ": column '" + entry.column_names[c] +
                                "': unknown Parquet field encoding '" +
                                entry.column_encodings[c] + "'");
    }
  }
  *names = entry.column_names;
  *encodings = entry.column_encodings;
  return Status::Ok();
}

Result<ShardReader> OpenParquetReader(const ShardEntry& entry, std::string_view data,
                                      std::string_view, bool consumer_waits) {
  const std::string& name = entry.raw_data.basename;
  if (!entry.row_group) return CorruptError(name + ": a Parquet shard entry without a row group");
  // A piece (ShardEntry::piece) is named by its file in errors. The
  // index's columns are the ones read (a dataset's `columns`, or all).
  const std::string& file = entry.piece ? entry.piece->file : name;
  // Whole groups at open, unless the consumer waits for this open's first
  // row (the first-row peek, a pass's first shard: a resumption's): the
  // engine's open threads decode a pass's other groups beside the consumer,
  // and a bad page fails the open (skip_corrupt_shards then skips the
  // shard; the engine never opens lazily with it). Decoding every group as
  // its rows are read (lazy_rows) made the first row 1.5-4x sooner but a
  // whole 1M-row pass 20-30% slower, the decoding moved onto the consumer
  // (BENCHMARKS.md, "Row groups decoded lazily"); the peek's one row needs
  // only one page a column, and a resumption's first row the pages from
  // its own on (those before it skipped by their headers).
  parquet::ColumnDecodeOptions options;
  options.lazy_rows = consumer_waits;
  Result<parquet::ParquetShardReader> opened =
      entry.piece ? parquet::ParquetShardReader::OpenPiece(
                        data,
                        {entry.piece->file_bytes, entry.piece->offset, entry.piece->length,
                         entry.piece->tail_bytes},
                        file, *entry.row_group, entry.samples, options, entry.column_names)
                  : parquet::ParquetShardReader::Open(data, name, *entry.row_group, entry.samples,
                                                      options, entry.column_names);
  if (!opened.ok() && opened.status().code() == StatusCode::kNotFound) {
    return CorruptError(opened.status().message() + " (the index has it: the file changed?)");
  }
  SLUICE_ASSIGN_OR_RETURN(parquet::ParquetShardReader reader, std::move(opened));
  if (reader.column_names() != entry.column_names) {
    return CorruptError(file + ": its columns differ from the index's (the file changed?)");
  }
  return ShardReader(std::move(reader));
}

}  // namespace sluice::format_hooks

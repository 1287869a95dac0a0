// The index of a dataset of Parquet files (IndexSource::kFileFooters): the
// files in the canonical order of formats/raw/file_listing.h (SelectFiles:
// bytewise-sorted paths, names starting with '_' or '.' left out), each
// file's footer read, and one ShardEntry per row group: format "parquet",
// raw_data = the file and its size, samples = the group's rows, row_group =
// its ordinal, column_names / column_encodings = the file's top-level fields
// in schema order with their encodings (field_encoding.h). Row groups of no
// rows are left out (a shard holds at least one sample).
//
// Thread-safe if `read` is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "formats/index/index.h"
#include "formats/parquet/footer.h"
#include "formats/raw/file_listing.h"

namespace sluice::parquet {

// Reads `size` bytes at `offset` of the file at `path` (relative to the
// dataset's root) into *out.
using FileRangeReader =
    std::function<Status(const std::string& path, uint64_t offset, uint64_t size, std::string* out)>;

// The entries of one file whose footer is `footer`, of the fields named
// `columns` (empty = all, in schema order; else in that order: a Parquet
// dataset's `columns`). kUnimplemented for a field the reader cannot read,
// kNotFound for a column the file lacks (naming the file and column).
Result<std::vector<ShardEntry>> ShardsOfFile(const ListedFile& file, const FileFooter& footer,
                                             const std::vector<std::string>& columns = {});

// ShardsOfFile's entries before they are made (the one owner of its rule):
// the configuration they share (format, column names and encodings; no
// per-shard field set) and the row groups that become shards, in order.
// A caller adding a file's shards to a ShardTable::Builder makes no entry.
struct FileShardRows {
  ShardEntry config;
  std::vector<uint32_t> row_groups;
  std::vector<size_t> fields;  // the schema's fields of `columns` (FieldsNamed)
};
Result<FileShardRows> ShardRowsOfFile(const ListedFile& file, const FileFooter& footer,
                                      const std::vector<std::string>& columns = {});
// ShardRowsOfFile's row_groups alone (the same errors). While `footer`'s
// schema is kept (schema_source.kept at every decode since an earlier
// footer's ShardRowsOfFile into the same FileFooter), that answer's config
// and fields with these row groups are ShardRowsOfFile's answer: the config
// and fields depend on the schema and `columns` alone, so a decoding thread
// shares them between files instead of copying them a file.
Result<std::vector<uint32_t>> ShardRowGroupsOfFile(const ListedFile& file,
                                                   const FileFooter& footer);
// The same into `*row_groups` (cleared first; its capacity kept, for a
// caller reading footer after footer).
Status ShardRowGroupsOfFileInto(const ListedFile& file, const FileFooter& footer,
                                std::vector<uint32_t>* row_groups);

// The footer options of an index's decode: the fields an index reads
// (MetadataFields::kForIndex), the checks of a full decode.
FooterOptions IndexFooterOptions();

// `files`: SelectFiles' output (sorted, sized). Errors name the file: its
// footer's error, a field the reader cannot read, kNotFound when no file
// holds a row. Footers are decoded with IndexFooterOptions.
Result<Index> IndexOfParquetFiles(const std::vector<ListedFile>& files, const FileRangeReader& read,
                                  const std::vector<std::string>& columns = {});

// IndexOfParquetFiles over files below the local folder `root`, each mapped
// so that only its footer's pages are read from disk. A file shorter than a
// footer says is kCorrupt naming it. The files are opened and mapped
// through `env`.
Result<Index> IndexOfLocalParquetFiles(const std::string& root, const std::vector<ListedFile>& files,
                                       const std::vector<std::string>& columns = {},
                                       Env* env = Env::Default());

// The selection of a folder of Parquet files: names ending in ".parquet"
// (Spark's "part-00000-<uuid>-c000.snappy.parquet", Hugging Face's
// "train-00000-of-00004.parquet").
FileSelection ParquetFileSelection();

}  // namespace sluice::parquet

// The index of a stream of Parquet files (StreamOptions::parquet, or a
// stream whose root holds Parquet files and no index.json: LoadStreamIndex
// decides): one "parquet" shard per row group, one sample per row, in the
// canonical order of formats/raw/file_listing.h (parquet_index.h).
//
// Without a remote the files are read in place: each shard's raw_data is
// its whole file (mapped; the row group decoded from it). With a remote
// (any RemoteSource: a folder, file://, s3://, ...) the stream is listed
// once per node (file_listing_index.h), every file's footer read once per
// node into the footer store (parquet_footer_store.h; not for a folder on
// a local disk, KeepsParquetFooterStore: a fetch reads its file's footer
// again, parquet_footer_source.h), and each row group
// becomes a piece (ShardEntry::piece): its cache file, named by
// RowGroupPieceName, holds the group's chunks of the stream's columns
// (FileDatasetOptions::columns, all when none), one ranged GET per read
// of formats/parquet/chunk_reads.h (chunks less than 1 MiB apart in one
// read: a whole group is one GET), and the file's footer tail, so a
// group is fetched, cached, counted under cache_limit (by those bytes)
// and evicted on its own.
//
// The listing, the footer store and a local stream's files are read and
// written through `env` (the dataset's: DatasetOptions::env).
// Thread-safe (no shared state beyond the files).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/guessed_piece_head.h"
#include "engine/dataset/remote_source.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"

namespace sluice {

// The selection of `options` (its globs, or the Parquet default when none).
FileSelection ParquetStreamSelection(const FileDatasetOptions& options);

// The cache file name of row group `row_group` of `file`: under the folder
// ".parquet_row_groups" (a name the canonical listing never keeps, so no
// data file is ever there), the file's path with '%' and '/' escaped
// (%25, %2F), '@' and the group's ordinal; paths that would make a name
// longer than 200 bytes use "long/" and the xxh64 of the path instead.
// With an `etag` (ListedFile::etag), ".e" and its xxh64 follow, so a file
// replaced by another of the same size (a new etag) never reads the
// pieces cached from the old one. With `columns` (a dataset reading only
// some), ".c" and the xxh64 of their set follow, so datasets of other
// columns sharing a cache folder keep pieces of their own (and those of
// the same set share them). Distinct (file, etag, row group, column set)
// get distinct names (up to a hash collision between two long paths, two
// etags or two sets).
std::string RowGroupPieceName(std::string_view file, uint32_t row_group,
                              const std::vector<std::string>& columns = {},
                              std::string_view etag = {});

// The tag of a set of columns: "c" and the xxh64 of the set (not the
// order), "" for none (all). It ends the pieces' names (above) and names
// the set's partition of the cache state (StreamShards), so datasets of
// different sets share one cache folder at the same time, each with its
// own pieces and its own cache_limit, while sharing the listing and the
// footers.
std::string ColumnSetTag(const std::vector<std::string>& columns);

// `options`: the stream's "parquet" options (or the defaults, detected).
// Errors name the file (its footer's error, a column the reader cannot
// read), the store URL, or that no Parquet file holds a row (kNotFound).
// `found_files` (when given) says whether the error is the listing's own or
// the files' (false: the store cannot list, or the listing held no Parquet
// file).
Result<Index> LoadParquetStreamIndex(const StreamOptions& stream, const FileDatasetOptions& options,
                                     RemoteSource* remote, std::chrono::milliseconds wait_timeout,
                                     bool* found_files = nullptr, Env* env = Env::Default());

// LoadParquetStreamIndex's shards as a table (ShardTable::FromIndex of its
// index, byte for byte, and the same errors), made without an entry a
// shard where the stream has a remote: each file's pieces, decoded on
// several threads, are added to the table in file order.
// `guess` (may be null): where this process is about to read the footers
// from the remote (the node has no footer store) and the stream reads all
// columns, the head of the listing's first file is read beside them into
// *guess (GuessedPieceHead: the caller keeps it, and `remote`, for the
// first row's piece); else *guess is left null.
Result<ShardTable> LoadParquetStreamTable(const StreamOptions& stream,
                                          const FileDatasetOptions& options, RemoteSource* remote,
                                          std::chrono::milliseconds wait_timeout,
                                          bool* found_files = nullptr, Env* env = Env::Default(),
                                          std::unique_ptr<GuessedPieceHead>* guess = nullptr);

}  // namespace sluice

// The shard format descriptor: one entry per shard format, keyed by the
// `format` string of the dataset's index, saying everything the rest of
// Sluice asks about a format. Code outside a format's own folder never
// compares format names; it looks the descriptor up and asks it.
//
//   what                     field / function
//   ----                     ----------------
//   where the index is from  index_source (and entry_schema for index.json)
//   a meta file or not       has_meta(), MetaFileOf(entry), RequiredMetaFileOf
//   its columns              columns(entry, names, encodings), ColumnsOf(entry, ...)
//   what a read field holds  fields (FieldForm)
//   a reader for a shard     open_reader(entry, data, meta, consumer_waits)
//   a writer                 open_writer(out_dir, columns, options), or null
//   the data file's header   head_bytes(entry, data_size), or null
//   one sample by ranged     peek (SamplePeekHooks), or null
//     reads of the data file
//   whether an open decodes  open_decodes
//
// Today's formats: Mosaic's "mds", and the split formats "json" (JSONL),
// "csv", "tsv", "xsv", whose shards are a data file plus a meta file
// (raw_meta/zip_meta). All five come from an index.json; their
// entry_schema is the row of formats/index/entry_schema.h that ParseIndex and
// the serializers use (that row cannot live here: the index layer sits
// below the readers). And "raw" (formats/raw/): unconverted files, indexed
// from a listing (IndexSource::kFileListing, formats/raw/file_listing.h:
// one ShardEntry per file, raw_data = the file, one sample, one "data"
// column of bytes), read only.
//
// And "parquet" (formats/parquet/): Parquet files, indexed from their
// footers (IndexSource::kFileFooters, formats/parquet/parquet_index.h: the
// files in the canonical order of file_listing.h, one ShardEntry per row
// group with raw_data = the file, samples = the group's rows, row_group =
// its ordinal, columns = the file's top-level fields with the encodings of
// formats/parquet/field_encoding.h), read only. open_reader gets the whole
// file's bytes and decodes its row group (ParquetShardReader); the fields
// it hands out are FieldForm::kParquetValue. A local folder of Parquet files
// or a single file opens as a dataset (DatasetReader::Open).
//
// Adding a format is one folder (formats/<name>/: reader, optional writer)
// and one entry in kFormats (format_descriptor.cc).
//
// Every builder yields the same Index of ShardEntry values that ParseIndex
// yields, so the engine's shard cache, which only sees an entry's files
// (raw_data, zip_data and MetaFileOf's), holds them without a special case;
// the engine's index loader picks the builder by index_source, the one
// place that reads it (engine/dataset/stream_index.cc). A Parquet entry
// streamed from a remote names a piece of its file (ShardEntry::piece: the
// row group's chunks and the footer), which open_reader decodes alone.
//
// Thread safety: the registry is immutable static data; descriptors and the
// pointers to them stay valid for the whole program. The hooks are pure
// functions of their arguments (open_writer creates folders and files).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "formats/dataset/field_writer.h"
#include "formats/dataset/shard_view.h"
#include "formats/index/entry_schema.h"
#include "formats/index/index.h"
#include "formats/index/shard_table.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

// Where a dataset's list of shards comes from.
enum class IndexSource {
  kIndexJson,    // the dataset's index.json (ParseIndex), as Mosaic writes it
  kFileFooters,  // Parquet: built from each file's footer; a row group is a shard
  kFileListing,  // raw files: built from the store's file listing; a file is a shard
};

// What ShardView::Read hands out as a sample's field for each column.
enum class FieldForm {
  kStoredBytes,  // the column's stored bytes (MDS: decode with its encoding)
  kJsonText,     // the member's JSON value text inside the sample's line (JSONL)
  kPlainText,    // the field's text between separators (CSV/TSV/XSV)
  kParquetValue, // the value in its column's encoding (formats/parquet/field_encoding.h);
                 // a null value is a view with a null pointer
};

// A byte span of a shard's data file.
struct DataSpan {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const DataSpan&) const = default;
};

// How one sample is read with ranged reads of an uncompressed data file
// alone, before (and without) the whole shard and its meta file: the
// engine's first-sample peek (engine/dataset/sample_peek.h) reads the
// bytes at bounds_at(i) (through likely_span(i) in the same read when that
// is near), asks sample_span where the sample lies, reads that unless it
// has it already, and asks split_sample for its fields. The format owns the layout;
// the engine owns the reads.
struct SamplePeekHooks {
  // Where the bytes that bound sample `i` lie in the data file (MDS: its
  // offsets entry, offsets[i] and offsets[i + 1]).
  DataSpan (*bounds_at)(uint32_t i);
  // Sample `i`'s span, from `bounds` (the bytes read at bounds_at(i)),
  // checked against `entry` (inside the data file, past its header) before
  // anything is sized by it. kCorrupt, prefixed with `where`, when bounds
  // is short or the span does not fit.
  Result<DataSpan> (*sample_span)(const ShardEntry& entry, uint32_t i, std::string_view bounds,
                                  std::string_view where);
  // Where sample `i` most likely lies, from `entry` alone, before its
  // bounds are read (MDS: i average samples past the offsets table: the
  // start is low by the config's few bytes, else exact for samples of one
  // size). A guess, never trusted: the engine may read it together with the
  // bounds, in one ranged read, and keeps only what the bounds then say.
  DataSpan (*likely_span)(const ShardEntry& entry, uint32_t i);
  // Splits sample `i`'s bytes (`sample`, read at `offset` of the data file)
  // into one view into `sample` per column, in stored order, as the
  // format's reader does; *fields is resized to match. kCorrupt naming the
  // shard, the sample and the offset.
  Status (*split_sample)(const ShardEntry& entry, uint32_t i, uint64_t offset,
                         std::string_view sample, std::vector<std::string_view>* fields);
};

struct ShardFormatDescriptor {
  std::string_view name;  // the index's `format` value
  IndexSource index_source;
  // The format's index.json entry layout (FindIndexEntrySchema(name));
  // null when the index does not come from an index.json.
  const IndexEntrySchema* entry_schema;
  FieldForm fields;

  // The columns `entry` declares, in stored order (sorted by name for every
  // format today), as names and encoding names, replacing *names and
  // *encodings. Errors (kCorrupt, kUnimplemented for an unknown encoding)
  // name the shard's data file. MDS: an encoding that is neither built in
  // nor one of `custom` is refused here (CheckEncodingRegistered), so a
  // dataset naming one fails when it opens; the other formats have no
  // custom encodings and ignore `custom`.
  Status (*columns)(const ShardEntry& entry, const CustomEncodings& custom,
                    std::vector<std::string>* names, std::vector<std::string>* encodings);

  // The format's reader over one shard's decompressed data file and (when
  // has_meta()) meta file. Checks the sample count against the entry. The
  // reader keeps views into `data`/`meta`, which must outlive it.
  // `consumer_waits`: the consumer is waiting for this open's first read
  // (the engine's first-row peek, and an iteration's first shard: a new
  // pass's or a resumption's first rows), so a format may defer work past it;
  // Parquet then decodes pages as rows are read (lazy_rows), where it
  // otherwise decodes the whole group and fails the open on a bad page.
  // The other formats ignore it.
  Result<ShardReader> (*open_reader)(const ShardEntry& entry, std::string_view data,
                                     std::string_view meta, bool consumer_waits);

  // Creates `out_dir` and a writer of this format into it (see
  // field_writer.h); null for a format Sluice only reads.
  Result<std::unique_ptr<FieldWriter>> (*open_writer)(
      const std::string& out_dir, const std::vector<std::pair<std::string, std::string>>& columns,
      const FieldWriterOptions& options);

  // The bytes at the head of a data file of `data_size` bytes that
  // open_reader reads before any sample (MDS: the count, the offsets table
  // and a page for the config), so that a reader of a shard on disk reads
  // it a sample at a time and asks for them at once (the engine's
  // OpenedShard::on_disk); null: such a shard is left to the kernel's
  // read-around (the split formats, whose offsets are in the meta file; a
  // raw file, one sample).
  uint64_t (*head_bytes)(const ShardEntry& entry, uint64_t data_size);
  // Reading a sample from the data file alone (MDS, whose offsets table is
  // in the data file's head); null when a sample cannot be located so (the
  // split formats keep their offsets in the meta file; a raw file is its
  // one sample).
  const SamplePeekHooks* peek;
  // Whether open_reader decodes the shard's rows (CPU in proportion to the
  // shard, as Parquet's pages: decompress, dictionary, levels), not just
  // finds its samples in the mapped bytes (MDS's offsets table, the split
  // formats' meta file, a raw file). The engine's prefetcher then holds
  // its other opens while a pass's first shard opens (engine/dataset/
  // prefetch_schedule.h, Options::hold_first); elsewhere it never does.
  bool open_decodes;
  // True when each shard has a meta file beside its data file (raw_meta,
  // zip_meta): Mosaic's split formats.
  bool has_meta() const { return entry_schema != nullptr && entry_schema->has_meta; }
};

// The descriptor of `format`, or nullptr when Sluice knows no such format.
const ShardFormatDescriptor* FindShardFormat(std::string_view format);

// The descriptor of `entry.format`; kUnimplemented "unknown shard format
// 'x'" (ParseIndex's wording) when there is none.
Result<const ShardFormatDescriptor*> ShardFormatOf(const ShardEntry& entry);

// Every descriptor, in a fixed order ("mds", "json", "csv", "tsv", "xsv", "raw",
// "parquet").
std::span<const ShardFormatDescriptor> ShardFormats();

// The columns `entry` declares (names and encodings, stored order), as its
// format's descriptor reads them, with the encodings the caller registered
// as its own (`custom`; see CustomEncodings); replaces *names and
// *encodings. Unknown format as ShardFormatOf. The one way the reader and
// the engine learn a shard's columns.
Status ColumnsOf(const ShardEntry& entry, const CustomEncodings& custom,
                 std::vector<std::string>* names, std::vector<std::string>* encodings);

// The shard's meta file (a pointer into `entry`) when its format has one
// and the entry names it; else nullptr. Never fails: an unknown format has
// no meta file.
const FileInfo* MetaFileOf(const ShardEntry& entry);

// As MetaFileOf, for readers that need the file: kCorrupt "<index_json>:
// shard '<data file>' of format <f> has no raw_meta" when the format has a
// meta file and the entry lacks it (ParseIndex never lets that through;
// hand-built entries might); unknown format as ShardFormatOf.
Result<const FileInfo*> RequiredMetaFileOf(const ShardEntry& entry, std::string_view index_json);

// MetaFileOf and RequiredMetaFileOf for a shard of a ShardTable (by view).
std::optional<FileRef> MetaFileOf(const ShardRef& shard);
Result<std::optional<FileRef>> RequiredMetaFileOf(const ShardRef& shard,
                                                  std::string_view index_json);

}  // namespace sluice

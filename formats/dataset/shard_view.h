// One shard's format reader, chosen by its index entry (MDS, JSONL,
// CSV/TSV/XSV, a raw file or a Parquet row group), over the shard's whole decompressed bytes, and the
// per-column field views of its samples. Shared by DatasetReader (local
// folders) and the streaming engine (cached shards).
//
// The view does not own the bytes: they must outlive it and every view it
// hands out. Immutable after Open; Read may be called from several threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "formats/index/index.h"
#include "formats/mds/mds_shard_reader.h"
#include "formats/parquet/parquet_shard_reader.h"
#include "formats/raw/raw_file_reader.h"
#include "formats/text/jsonl_shard_reader.h"
#include "formats/text/xsv_shard_reader.h"

namespace sluice {

// Where a global sample lives.
struct SampleLocation {
  size_t shard = 0;
  uint32_t index_in_shard = 0;
};

// One sample's stored fields, one view per column, plus the whole stored
// sample (MDS sample bytes, or the text line with its newline).
// MDS: the field's stored bytes. CSV/TSV/XSV: the field's text. Raw file:
// the file's bytes (raw and the one field).
// JSONL: the member's JSON value text inside the line. Parquet: the value
// in its column's encoding (formats/parquet/field_encoding.h), a null
// value as a view with a null pointer; `raw` is empty (a row has no stored
// bytes of its own).
struct SampleFields {
  SampleLocation where;
  std::string_view raw;
  std::vector<std::string_view> fields;
  // Parquet packed lists that hold a null element (formats/parquet/
  // field_encoding.h): one MaskedField per such field of the sample, found
  // by its data pointer (a reader that reorders `fields` keeps them right).
  // Filled only when the reader sets wants_masks (it hands the masks on);
  // otherwise such a sample is kUnimplemented. Read clears it, and leaves it
  // empty for a sample without one.
  bool wants_masks = false;
  std::vector<parquet::MaskedField> masked;
  // Set by a reader whose views end at its next read into these fields
  // anyway (the engine's NextBatch and Get): a Parquet value that would be
  // copied into its row group's buffer when first read is copied into
  // `scratch` instead (ParquetShardReader::ReadRow with a RowScratch), and
  // its view lasts only until the next Read into these fields. Other views
  // live as the reader says.
  bool until_next_read = false;
  parquet::RowScratch scratch;
  // Set by a reader that copies every value anyway (into a batch's buffer,
  // a Python bytes): a Parquet value that would be copied (into its row
  // group's buffer, or the scratch) is copied nowhere; its field is listed
  // in `pieced` with its pieces, views (of the file, mostly) that live as
  // the reader's other views (parquet::PiecedField; the field's own bytes
  // must not be read). Read clears it, and leaves it empty for a sample
  // without one (most samples: only large values that straddle a snappy
  // page's pieces are handed out so).
  bool wants_pieces = false;
  std::vector<parquet::PiecedField> pieced;
};

// The column of f.fields whose view has field's data pointer (how a
// MaskedField or PiecedField names its field), or f.fields.size() if none.
size_t ColumnOfField(const SampleFields& f, std::string_view field);

// The entry of f.pieced for field view `field` (found by its data pointer),
// or null when that field is an ordinary view.
const parquet::PiecedField* PiecedOf(const SampleFields& f, std::string_view field);

// Writes the value of `p` (its pieces laid end to end, never past its
// size) to out[0, p.field.size()).
void CopyPiecedValue(const parquet::PiecedField& p, char* out);

// A reader of one of the formats. A format's descriptor
// (format_descriptor.h) opens the alternative its shards need.
using ShardReader =
    std::variant<std::monostate, MdsShardReader, JsonlShardReader, XsvShardReader, RawFileReader,
                 parquet::ParquetShardReader>;

class ShardView {
 public:
  ShardView() = default;

  // `data`/`meta`: the shard's decompressed data and (split formats) meta
  // file. Opens the reader that the entry's format descriptor opens (an
  // unknown format: kUnimplemented, as ShardFormatOf). Checks the sample
  // count against the entry. Errors name the file. `consumer_waits`: as
  // the descriptor's open_reader (true only for the engine's first-row
  // peek and an iteration's first shard: a Parquet group is then decoded
  // as its rows are read, and a bad page fails the read that reaches it,
  // not the open).
  static Result<ShardView> Open(const ShardEntry& entry, std::string_view data,
                                std::string_view meta, bool consumer_waits = false);

  // Exactly one is set, by the entry's format.
  const MdsShardReader* mds() const { return std::get_if<MdsShardReader>(&reader_); }
  const JsonlShardReader* jsonl() const { return std::get_if<JsonlShardReader>(&reader_); }
  const XsvShardReader* xsv() const { return std::get_if<XsvShardReader>(&reader_); }
  const RawFileReader* raw() const { return std::get_if<RawFileReader>(&reader_); }
  const parquet::ParquetShardReader* parquet() const {
    return std::get_if<parquet::ParquetShardReader>(&reader_);
  }

  // Sample `i`'s fields in the order of `column_names` (the dataset's
  // columns) and its raw bytes into `out` (`out->where` is left alone).
  Status Read(uint32_t i, const std::vector<std::string>& column_names, SampleFields* out) const;
  // Hints that sample i is read soon (MDS only; other formats ignore them):
  // see MdsShardReader::PrefetchOffsets and Prefetch.
  void PrefetchOffsets(uint32_t i) const {
    if (const MdsShardReader* m = mds()) m->PrefetchOffsets(i);
  }
  void Prefetch(uint32_t i) const {
    if (const MdsShardReader* m = mds()) m->Prefetch(i);
  }

 private:
  std::string name_;  // the data file, for errors
  ShardReader reader_;
};

}  // namespace sluice

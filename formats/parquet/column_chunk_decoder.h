// One column chunk (the chunk of one top-level field in one row group) into
// a ColumnBuffer, in one pass over its pages: the dictionary page, then each
// data page's levels (v1: inside the decompressed body, each with its 4-byte
// length; v2: before the values, uncompressed) through the LevelAssembler,
// and its values through value_decoder.h, placed in the leaf slots the
// levels say are present.
//
// Checks beyond the pages' own: the field is one the reader supports
// (ReadableField), its codec is supported, one dictionary page at most and
// before the data pages, levels encoded as RLE, the pages' level entries
// adding up to the chunk's num_values and its rows to the row group's, and
// the caller's budgets (declared counts are compared with them before any
// allocation). Errors name the file, row group and column, and the page's
// offset: "f.parquet: row group 0 column \"ids.list.element\": page at
// offset 4: ...".
// Thread-safe (no shared state); decode different chunks concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/column_buffer.h"
#include "formats/parquet/footer.h"
#include "formats/parquet/page_reader.h"

namespace sluice::parquet {

// The caller's budget for one chunk. RLE lets a few bytes declare millions
// of levels (an all-null column is nearly free to store), so these bound
// what a small hostile chunk can make the decoder allocate: about 26 bytes
// per level entry (validity, list offsets, a view) at the most, plus the
// values. The defaults hold a ~100 MB row group of token ids (25M int32)
// with room to spare.
//
// max_row_group_bytes is the budget of a reader that decodes several chunks
// of one row group (ReadRowGroup, ParquetShardReader): what their buffers
// hold together (ColumnBuffer::HeldBytes) and the bytes it read for them,
// checked as each chunk is decoded (RowGroupBudget).
struct ColumnDecodeOptions {
  PageLimits pages;
  uint64_t max_level_entries = uint64_t{1} << 26;  // per chunk (its num_values)
  uint64_t max_value_bytes = uint64_t{1} << 30;    // fixed-width and rebuilt values
  uint64_t max_row_group_bytes = uint64_t{4} << 30;
  // Large values of a PLAIN byte-array page in pieces that straddle pieces
  // are copied when first read (ColumnBuffer::deferred), not when decoded:
  // only for a reader that calls deferred.Ensure on every value it hands
  // out (ParquetShardReader).
  bool defer_large_gathers = false;
  // ParquetShardReader only: decode the group's pages as its rows are read
  // (ColumnChunkCursor), not all at Open. A row's page is decoded by the
  // first ReadRow that needs it (the first row: one data page per column;
  // a first read at row R starts at R's page), and a bad page's error (or
  // a budget passed) comes from that ReadRow instead of from Open.
  bool lazy_rows = false;
  // ColumnChunkCursor (lazy_rows): a data page of dictionary-encoded
  // fixed-width values (a list of token ids) is decoded this many level
  // entries at a time as its rows are read, not whole at its first row
  // (0: whole). Decoding to the chunk's end takes whole pages.
  uint64_t lazy_step_levels = 8192;
  // ColumnChunkCursor (lazy_rows): a SNAPPY dictionary page of byte arrays
  // is decompressed only as far as the entries the rows read index, and its
  // data pages are decoded this many level entries at a time (0: the
  // dictionary whole at its page). A resumed or first row of text then
  // costs a few of its entries, not the whole page (~1.2 MB in pyarrow's
  // row groups); the rest is decompressed as rows go on, or at the chunk's end.
  uint64_t lazy_dictionary_step_levels = 256;
};

// A reader's running total of the bytes one row group holds, against
// ColumnDecodeOptions::max_row_group_bytes. Charge adds `bytes` for `what`
// (a column's name, or what was read) and fails once the total passes the
// budget: kOutOfRange "f.parquet: row group 3 column \"image\": the row
// group holds 5242880 bytes with this column, more than the reader's budget
// of 4194304 bytes (max_row_group_bytes)". Not thread-safe.
class RowGroupBudget {
 public:
  RowGroupBudget(uint64_t max_bytes, std::string_view file, size_t row_group)
      : max_(max_bytes), file_(file), row_group_(row_group) {}
  // `column`: the column's path, or empty for bytes read for several.
  Status Charge(uint64_t bytes, std::string_view column, std::string_view what);
  uint64_t held() const { return held_; }

 private:
  uint64_t max_;
  std::string_view file_;
  size_t row_group_;
  uint64_t held_ = 0;
};

// `chunk` holds the bytes footer.chunk_ranges[row_group][leaf] of the
// field's leaf. The buffer's views may point into `chunk`: keep its bytes
// alive (or set the buffer's `source` to their owner) while it is used.
Result<ColumnBuffer> DecodeColumnChunk(const FileFooter& footer, size_t row_group, size_t field,
                                       std::string_view chunk, std::string_view file,
                                       const ColumnDecodeOptions& options = {});

// A chunk decoded a page at a time, only as far as its rows are asked for
// (ParquetShardReader's lazy rows): its first row costs the dictionary page
// and the first data page; a cursor opened at row R counts the data pages
// wholly before R's by their headers (a flat column's values are its rows;
// a list column's rows are its repetition levels' zeros, read without
// decoding the values) and decodes from the last of them that starts a row.
// buffer()'s row 0 (slot 0) is the chunk's row first_row(); its rows grow as
// DecodeThrough goes on and never move (each array is reserved whole at
// Open, as DecodeColumnChunk's are), so views of the rows decoded stay
// valid. Errors are DecodeColumnChunk's, found when the page that holds them
// is decoded (then every later call returns the same); the chunk's totals
// (values, rows) are checked when its last page is. `footer` and `chunk`
// must outlive the cursor. Not thread-safe: the buffer's decoded rows may be
// read from several threads while no DecodeThrough runs.
class ColumnChunkCursor {
 public:
  static Result<std::unique_ptr<ColumnChunkCursor>> Open(const FileFooter& footer, size_t row_group,
                                                         size_t field, std::string_view chunk,
                                                         std::string_view file,
                                                         const ColumnDecodeOptions& options = {},
                                                         uint64_t first_row = 0);
  ~ColumnChunkCursor();

  // Decodes pages until the chunk's row `row` (>= first_row()) is whole in
  // buffer(), or to the chunk's end.
  Status DecodeThrough(uint64_t row);
  uint64_t first_row() const;
  // The chunk's rows [first_row(), end_row()) are whole in buffer().
  uint64_t end_row() const;
  bool done() const;  // every page decoded and the chunk's totals checked
  const ColumnBuffer& buffer() const;
  // What buffer() holds, with the page and value buffers reserved for the
  // pages still to come.
  uint64_t HeldBytes() const;
  // Data pages decoded so far (not those skipped): what a lazy read costs.
  size_t data_pages_decoded() const;
  // Level entries decoded so far (not those skipped): a page decoded in
  // steps (lazy_step_levels) counts the steps' entries.
  uint64_t levels_decoded() const;
  // Bytes of a dictionary page left compressed (lazy_dictionary_step_levels)
  // decompressed so far: its whole size once every entry is found; 0 when
  // none was left compressed.
  uint64_t dictionary_bytes_decompressed() const;

 private:
  ColumnChunkCursor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::parquet

// One row group of a Parquet file as a shard of a dataset (format
// "parquet", ShardEntry::row_group): the group's column chunks decoded once
// when it opens (column_chunk_decoder.h), or, with
// ColumnDecodeOptions::lazy_rows, a page at a time as its rows are first
// read (ColumnChunkCursor: the first row costs a page of each column, a
// first read at row R the pages from R's); each row's fields then handed
// out as views into the decoded buffers, with the encodings of
// field_encoding.h (nulls as views with a null pointer).
//
// Views point into `data` (the whole file, which must outlive the reader,
// for values of pages stored uncompressed) and into buffers the reader
// shares among its copies (so they live as long as any copy). A large
// value of a snappy page that straddles its pieces is copied into place by
// the first ReadRow of its row (column_chunk_decoder.h,
// defer_large_gathers), unless the caller reads with a RowScratch: then it
// is copied into the scratch, and its view lasts until the next read into
// that scratch; or, for a caller that takes pieces, not copied at all (its
// pieces, nearly all views of `data`, are handed out beside it). Immutable
// after Open but for those copies and, with lazy_rows, the pages decoded
// later (under the reader's lock; what is decoded never moves, so views
// handed out stay valid); ReadRow may be called from several threads at
// once (each value copied once, each page decoded once; a RowScratch is one
// caller's).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/uninitialized_buffer.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/field_encoding.h"
#include "formats/parquet/footer.h"

namespace sluice::parquet {

inline constexpr std::string_view kParquetFormat = "parquet";

// A reader's room for the values ReadRow copies when its views need last
// only until its next read: one buffer per column, grown to the column's
// largest such value and then reused (it stays in the cache). Movable: the
// bytes do not move with it. Not thread-safe: one per reading thread (or
// per sample slot of a batch).
struct RowScratch {
  std::vector<UninitializedBuffer> columns;
};

// A field handed out as its pieces (ReadRow with `pieced`): a large value
// of a snappy page that straddles its pieces and was not copied into place.
// `field` is its view as in *fields (found by its data pointer, as a
// MaskedField): its size is the value's, but its bytes must not be read;
// the value is `pieces` laid end to end (views of the file's snappy
// literals and of the reader's buffer for snappy's short copies; the span
// itself the reader's: all live as long as the reader's other views).
struct PiecedField {
  std::string_view field;
  std::span<const std::string_view> pieces;
};

class ParquetShardReader {
 public:
  ParquetShardReader() = default;

  // `data`: the whole file named `file`. Reads its footer and decodes the
  // fields named `columns` (empty = every field, in schema order; else in
  // that order) of row group `row_group` (every page; CRCs checked where
  // the writer stored them). kCorrupt when the group does not hold
  // `expected_rows` rows (the index's count); kNotFound for a column the
  // file lacks; kOutOfRange when what the reader holds for the group (its
  // decoded buffers and rows, not the views of `data`) passes
  // options.max_row_group_bytes, naming the column that passed it
  // (RowGroupBudget); every error names the file (and the row group, column
  // and page when a page is bad).
  static Result<ParquetShardReader> Open(std::string_view data, std::string_view file,
                                         size_t row_group, uint64_t expected_rows,
                                         const ColumnDecodeOptions& options = {},
                                         const std::vector<std::string>& columns = {});

  // A piece of the file instead of all of it (a row group streamed alone):
  // `piece` is the reads of the chosen columns' chunks (chunk_reads.h
  // ChunkReads, `length` bytes in all, back to back in file order)
  // followed by the file's last `tail_bytes` bytes (the footer, magic
  // included); the file has `file_bytes` bytes; `offset` is the first
  // read's (for messages). As Open otherwise; a piece whose size does not
  // match the reads its footer gives is kCorrupt naming the file and row
  // group.
  struct Piece {
    uint64_t file_bytes = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t tail_bytes = 0;
  };
  static Result<ParquetShardReader> OpenPiece(std::string_view piece, const Piece& where,
                                              std::string_view file, size_t row_group,
                                              uint64_t expected_rows,
                                              const ColumnDecodeOptions& options = {},
                                              const std::vector<std::string>& columns = {});

  uint32_t num_rows() const;
  const std::vector<std::string>& column_names() const;
  const std::vector<FieldEncoding>& encodings() const;

  // Row `row`'s fields, one per column in schema order, into *fields.
  // kOutOfRange past the last row; kUnimplemented for a packed list holding
  // a null element (see field_encoding.h): its values alone would read the
  // nulls as zeros, so a caller that cannot hand a mask on gets an error.
  Status ReadRow(uint32_t row, std::vector<std::string_view>* fields) const;

  // As above, and a packed list holding a null element is read: its field
  // is the values (zero bytes where null) and *masked gets a MaskedField
  // for it (field_encoding.h). *masked is cleared first; it stays empty for
  // a row without such a list (no extra work then). The views live as
  // long as the fields'.
  //
  // With `scratch`: a large value of a snappy page that straddles its
  // pieces and was not copied into place yet is copied into *scratch
  // instead (DeferredGathers::Transient), so its view is valid only until
  // the next ReadRow with the same scratch (or its destruction); every other
  // view lives as said above. For callers whose views end at their next
  // read anyway (a batch's views, valid until the next batch): it spares
  // the write of the value into the row group's buffer.
  //
  // With `pieced` (cleared first): such a value is copied nowhere; its field
  // is listed in *pieced with its pieces instead (PiecedField), for a
  // consumer that copies the value anyway and so makes the one copy (the
  // scratch is then not used for it). A value already copied into place is
  // an ordinary view.
  Status ReadRow(uint32_t row, std::vector<std::string_view>* fields,
                 std::vector<MaskedField>* masked, RowScratch* scratch = nullptr,
                 std::vector<PiecedField>* pieced = nullptr) const;

  // True when some row of the group has a packed list holding a null
  // element (with lazy_rows: some row decoded so far).
  bool has_masked_rows() const;

  // The data pages decoded so far, over every column (not those skipped):
  // what the reads cost (lazy_rows: the first row, one per column).
  size_t data_pages_decoded() const;

 private:
  struct State;
  // Views [offset, offset + size) of the file, or an error naming it.
  using FileView = std::function<Result<std::string_view>(uint64_t offset, uint64_t size)>;
  // Decodes fields `fields` (top-level indices) of the group.
  static Result<ParquetShardReader> OpenWith(const FileView& view, FileFooter footer,
                                             const std::vector<size_t>& fields,
                                             std::string_view file, size_t row_group,
                                             uint64_t expected_rows,
                                             const ColumnDecodeOptions& options);
  std::shared_ptr<State> state_;  // its decoding under its own lock
};

}  // namespace sluice::parquet

// One row group, or only some of its fields, from ranged reads: the chosen
// fields' column chunks are read (as chunk_reads.h groups them, so a whole
// row group is usually one read) and
// each decoded in one pass (column_chunk_decoder.h).
//
// The buffers own the bytes they were read from (ColumnBuffer::source), so
// their views stay valid as long as the buffers. Errors: a field the reader
// does not support or that does not exist (checked before any read), a
// read's error with "<file>: reading bytes [a, b): " prepended, and the
// decoder's, and kOutOfRange when the bytes read and the buffers together
// pass options.decode.max_row_group_bytes (RowGroupBudget: the reads are
// charged before they are made, each buffer when decoded). Thread-safe if
// `read` is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/chunk_reads.h"
#include "formats/parquet/column_buffer.h"
#include "formats/parquet/column_chunk_decoder.h"
#include "formats/parquet/footer.h"

namespace sluice::parquet {

struct RowGroupReadOptions {
  ColumnDecodeOptions decode;
  uint64_t max_gap_bytes = kChunkReadGapBytes;  // read across gaps up to this size
};

// Buffers in the order of `fields` (top-level field indices; empty = all
// fields, in schema order).
Result<std::vector<ColumnBuffer>> ReadRowGroup(const FileFooter& footer, size_t row_group,
                                               std::vector<size_t> fields, const RangeReader& read,
                                               std::string_view file,
                                               const RowGroupReadOptions& options = {});

}  // namespace sluice::parquet

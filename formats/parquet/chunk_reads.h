// Which bytes of a file to read for some fields of one row group: the
// chosen fields' column chunks, sorted by offset, those with at most
// `max_gap_bytes` between them joined into one read (the gap's bytes read
// and thrown away: a request costs more than a megabyte does on the stores
// Sluice reads). The one owner of that rule: the row group reader, a
// remote Parquet stream's index (a piece's size), its fetch (one GET per
// read) and the piece's reader (where each chunk lies) all ask here.
//
// Pure functions of the footer; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/footer.h"

namespace sluice::parquet {

// Chunks this close or closer are read together.
inline constexpr uint64_t kChunkReadGapBytes = uint64_t{1} << 20;

// The top-level fields named `names`, in that order (empty = every field,
// in schema order). kNotFound naming `file`, the column and the file's
// columns for a name the schema lacks; kInvalidArgument for a name twice.
Result<std::vector<size_t>> FieldsNamed(const Schema& schema, const std::vector<std::string>& names,
                                        std::string_view file);

// The reads covering fields `fields`' chunks of row group `row_group` (< the
// footer's groups), by offset, none overlapping or empty (a field whose
// chunk lies inside another's read adds none).
std::vector<ByteRange> ChunkReads(const FileFooter& footer, size_t row_group,
                                  const std::vector<size_t>& fields,
                                  uint64_t max_gap_bytes = kChunkReadGapBytes);
// The same reads into `*reads` (cleared first; its capacity kept), so that
// a caller reading footer after footer allocates none a row group.
void ChunkReadsInto(const FileFooter& footer, size_t row_group, const std::vector<size_t>& fields,
                    uint64_t max_gap_bytes, std::vector<ByteRange>* reads);

// The bytes the reads hold in all.
uint64_t BytesOfReads(const std::vector<ByteRange>& reads);

}  // namespace sluice::parquet

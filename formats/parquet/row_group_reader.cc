#include "formats/parquet/row_group_reader.h"

#include <algorithm>
#include <memory>

#include "formats/parquet/chunk_reads.h"

namespace sluice::parquet {

Result<std::vector<ColumnBuffer>> ReadRowGroup(const FileFooter& footer, size_t row_group,
                                               std::vector<size_t> fields, const RangeReader& read,
                                               std::string_view file,
                                               const RowGroupReadOptions& options) {
  if (row_group >= footer.meta.row_groups.size()) {
    return NotFoundError(std::string(file) + ": no row group " + std::to_string(row_group) + " (" +
                         std::to_string(footer.meta.row_groups.size()) + " row groups)");
  }
  if (fields.empty()) {
    for (size_t f = 0; f < footer.schema.fields.size(); ++f) fields.push_back(f);
  }
  for (size_t f : fields) SLUICE_RETURN_IF_ERROR(ReadableField(footer.schema, f, file));
  const auto range = [&](size_t i) {
    return footer.chunk_ranges[row_group][footer.schema.fields[fields[i]].first_leaf];
  };
  const std::vector<ByteRange> reads = ChunkReads(footer, row_group, fields, options.max_gap_bytes);
  // The reads' sizes lie inside the file (DecodeFooter): charged before reading.
  RowGroupBudget budget(options.decode.max_row_group_bytes, file, row_group);
  SLUICE_RETURN_IF_ERROR(budget.Charge(BytesOfReads(reads), "", "the bytes of its column chunks"));
  std::vector<std::shared_ptr<const std::string>> bytes_of_read;
  for (const ByteRange& r : reads) {
    auto buffer = std::make_shared<std::string>();
    Status s = read(r.offset, r.size, buffer.get());
    if (s.ok() && buffer->size() != r.size) {
      s = IoError("read " + std::to_string(buffer->size()) + " bytes");
    }
    SLUICE_RETURN_IF_ERROR(s.WithContext(std::string(file) + ": reading bytes [" +
                                         std::to_string(r.offset) + ", " +
                                         std::to_string(r.offset + r.size) + ")"));
    bytes_of_read.push_back(std::move(buffer));
  }
  // Each chunk's read: the last starting at or before it (an empty chunk
  // has none and is decoded from no bytes).
  std::vector<std::shared_ptr<const std::string>> bytes_of(fields.size());
  std::vector<uint64_t> start_of(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    if (range(i).size == 0) continue;
    auto it = std::upper_bound(reads.begin(), reads.end(), range(i).offset,
                               [](uint64_t offset, const ByteRange& r) { return offset < r.offset; });
    const size_t k = static_cast<size_t>(it - reads.begin()) - 1;  // reads cover every chunk
    bytes_of[i] = bytes_of_read[k];
    start_of[i] = reads[k].offset;
  }
  std::vector<ColumnBuffer> out;
  out.reserve(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const ByteRange r = range(i);
    const std::string_view chunk =
        bytes_of[i] ? std::string_view(*bytes_of[i]).substr(r.offset - start_of[i], r.size)
                    : std::string_view();
    SLUICE_ASSIGN_OR_RETURN(ColumnBuffer b, DecodeColumnChunk(footer, row_group, fields[i], chunk, file,
                                                              options.decode));
    SLUICE_RETURN_IF_ERROR(budget.Charge(b.HeldBytes(), b.leaf.path, "this column decoded"));
    b.source = bytes_of[i];
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace sluice::parquet

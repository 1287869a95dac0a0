#include "formats/parquet/row_group_reader.h"

#include <algorithm>
#include <memory>

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
  // The chunks by offset, grouped into reads.
  std::vector<size_t> order(fields.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto range = [&](size_t i) {
    return footer.chunk_ranges[row_group][footer.schema.fields[fields[i]].first_leaf];
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return range(a).offset < range(b).offset; });
  std::vector<std::shared_ptr<const std::string>> bytes_of(fields.size());
  std::vector<uint64_t> start_of(fields.size());
  for (size_t i = 0; i < order.size();) {
    const uint64_t start = range(order[i]).offset;
    uint64_t end = start + range(order[i]).size;
    size_t j = i + 1;
    while (j < order.size() && range(order[j]).offset <= end + options.max_gap_bytes) {
      end = std::max(end, range(order[j]).offset + range(order[j]).size);
      ++j;
    }
    auto buffer = std::make_shared<std::string>();
    Status s = read(start, end - start, buffer.get());
    if (s.ok() && buffer->size() != end - start) {
      s = IoError("read " + std::to_string(buffer->size()) + " bytes");
    }
    SLUICE_RETURN_IF_ERROR(s.WithContext(std::string(file) + ": reading bytes [" +
                                         std::to_string(start) + ", " + std::to_string(end) + ")"));
    for (size_t k = i; k < j; ++k) {
      bytes_of[order[k]] = buffer;
      start_of[order[k]] = start;
    }
    i = j;
  }
  std::vector<ColumnBuffer> out;
  out.reserve(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const ByteRange r = range(i);
    const std::string_view chunk = std::string_view(*bytes_of[i]).substr(r.offset - start_of[i], r.size);
    SLUICE_ASSIGN_OR_RETURN(ColumnBuffer b, DecodeColumnChunk(footer, row_group, fields[i], chunk, file,
                                                              options.decode));
    b.source = bytes_of[i];
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace sluice::parquet

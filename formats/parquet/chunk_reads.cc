#include "formats/parquet/chunk_reads.h"

#include <algorithm>
#include <set>

namespace sluice::parquet {

Result<std::vector<size_t>> FieldsNamed(const Schema& schema, const std::vector<std::string>& names,
                                        std::string_view file) {
  std::vector<size_t> out;
  if (names.empty()) {
    for (size_t f = 0; f < schema.fields.size(); ++f) out.push_back(f);
    return out;
  }
  std::set<std::string_view> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return InvalidArgumentError(std::string(file) + ": column \"" + name + "\" is asked twice");
    }
    auto it = std::find_if(schema.fields.begin(), schema.fields.end(),
                           [&](const Field& f) { return f.name == name; });
    if (it == schema.fields.end()) {
      std::string have;
      for (const Field& f : schema.fields) have += (have.empty() ? "" : ", ") + f.name;
      return NotFoundError(std::string(file) + ": no column \"" + name + "\" (its columns: " +
                           have + ")");
    }
    out.push_back(static_cast<size_t>(it - schema.fields.begin()));
  }
  return out;
}

std::vector<ByteRange> ChunkReads(const FileFooter& footer, size_t row_group,
                                  const std::vector<size_t>& fields, uint64_t max_gap_bytes) {
  std::vector<ByteRange> chunks;
  chunks.reserve(fields.size());
  for (size_t f : fields) {
    chunks.push_back(footer.chunk_ranges[row_group][footer.schema.fields[f].first_leaf]);
  }
  std::sort(chunks.begin(), chunks.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  std::vector<ByteRange> reads;
  for (const ByteRange& c : chunks) {
    if (c.size == 0) continue;
    // Offsets and sizes lie inside the file (DecodeFooter): no overflow.
    if (!reads.empty() && c.offset <= reads.back().offset + reads.back().size + max_gap_bytes) {
      ByteRange& last = reads.back();
      last.size = std::max(last.offset + last.size, c.offset + c.size) - last.offset;
    } else {
      reads.push_back(c);
    }
  }
  return reads;
}

uint64_t BytesOfReads(const std::vector<ByteRange>& reads) {
  uint64_t total = 0;
  for (const ByteRange& r : reads) total += r.size;
  return total;
}

}  // namespace sluice::parquet

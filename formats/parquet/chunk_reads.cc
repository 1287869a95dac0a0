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
  std::vector<ByteRange> reads;
  ChunkReadsInto(footer, row_group, fields, max_gap_bytes, &reads);
  return reads;
}

void ChunkReadsInto(const FileFooter& footer, size_t row_group, const std::vector<size_t>& fields,
                    uint64_t max_gap_bytes, std::vector<ByteRange>* reads) {
  // The chunks sorted in place, then joined into their first entries.
  std::vector<ByteRange>& out = *reads;
  out.clear();
  for (size_t f : fields) {
    const ByteRange& c = footer.chunk_ranges[row_group][footer.schema.fields[f].first_leaf];
    if (c.size != 0) out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  size_t n = 0;
  for (const ByteRange& c : out) {
    // Offsets and sizes lie inside the file (DecodeFooter): no overflow.
    if (n > 0 && c.offset <= out[n - 1].offset + out[n - 1].size + max_gap_bytes) {
      ByteRange& last = out[n - 1];
      last.size = std::max(last.offset + last.size, c.offset + c.size) - last.offset;
    } else {
      out[n++] = c;
    }
  }
  out.resize(n);
}

uint64_t BytesOfReads(const std::vector<ByteRange>& reads) {
  uint64_t total = 0;
  for (const ByteRange& r : reads) total += r.size;
  return total;
}

}  // namespace sluice::parquet

#include "formats/parquet/footer.h"

#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "formats/parquet/metadata_decoder.h"

namespace sluice::parquet {
namespace {

constexpr uint64_t kTrailerBytes = 8;  // length + magic
constexpr uint64_t kMinFileBytes = 4 + kTrailerBytes;

std::string Prefix(std::string_view file) { return std::string(file) + ": "; }

Status CheckChunk(const FileFooter& f, size_t rg, size_t leaf, std::string_view file,
                  uint64_t data_end, ByteRange* range) {
  const ColumnChunk& cc = f.meta.row_groups[rg].columns[leaf];
  const LeafColumn& col = f.schema.leaves[leaf];
  // Made only for an error: a footer has a chunk per leaf and row group.
  const auto where = [&] {
    return Prefix(file) + "row group " + std::to_string(rg) + " column \"" + col.path + "\": ";
  };
  if (cc.file_path) {
    return UnimplementedError(where() + "its data is in another file (\"" + *cc.file_path +
                              "\")");
  }
  if (cc.encrypted) return UnimplementedError(where() + "the column is encrypted");
  if (!cc.meta_data) return CorruptError(where() + "no column metadata");
  const ColumnMetaData& m = *cc.meta_data;
  if (m.path_in_schema != col.path_parts) {
    std::string path;
    for (const std::string& p : m.path_in_schema) path += (path.empty() ? "" : ".") + p;
    return CorruptError(where() + "the chunk's path is \"" + path + "\"");
  }
  if (m.type != col.physical_type) {
    return CorruptError(where() + "the chunk's type is " + PhysicalTypeName(m.type) +
                        ", the schema's " + PhysicalTypeName(col.physical_type));
  }
  // Writers store dictionary_page_offset 0 for "none"; the chunk starts at
  // its dictionary page only when that comes before the data pages.
  uint64_t start = static_cast<uint64_t>(m.data_page_offset);
  if (m.dictionary_page_offset && *m.dictionary_page_offset > 0 &&
      static_cast<uint64_t>(*m.dictionary_page_offset) < start) {
    start = static_cast<uint64_t>(*m.dictionary_page_offset);
  }
  const uint64_t size = static_cast<uint64_t>(m.total_compressed_size);
  if (start < kParquetMagic.size() || start > data_end || size > data_end - start) {
    return CorruptError(where() + "its pages at [" + std::to_string(start) + ", " +
                        std::to_string(start + size) + ") are not inside the data at [4, " +
                        std::to_string(data_end) + ")");
  }
  *range = ByteRange{start, size};
  return Status::Ok();
}

}  // namespace

ByteRange FooterTailRange(uint64_t file_size, const FooterOptions& options) {
  const uint64_t n = std::min(file_size, std::max<uint64_t>(options.first_read_bytes, kTrailerBytes));
  return ByteRange{file_size - n, n};
}

Result<uint32_t> ParseFooterLength(std::string_view tail, uint64_t file_size,
                                   std::string_view file, const FooterOptions& options) {
  if (file_size < kMinFileBytes) {
    return CorruptError(Prefix(file) + "not a Parquet file: " + std::to_string(file_size) +
                        " bytes, fewer than the 12 of the smallest");
  }
  if (tail.size() < kTrailerBytes || tail.size() > file_size) {
    return InvalidArgumentError(Prefix(file) + "a tail of " + std::to_string(tail.size()) +
                                " bytes cannot hold the footer's trailer");
  }
  const std::string_view magic = tail.substr(tail.size() - 4);
  if (magic == "PARE") {
    return UnimplementedError(Prefix(file) + "the footer is encrypted (PARE)");
  }
  if (magic != kParquetMagic) {
    return CorruptError(Prefix(file) + "not a Parquet file: it ends in \"" + HexEncode(magic) +
                        "\" (hex), not \"PAR1\"");
  }
  const uint32_t length = LoadLE<uint32_t>(tail.data() + tail.size() - kTrailerBytes);
  if (length > options.max_footer_bytes) {
    return CorruptError(Prefix(file) + "footer of " + std::to_string(length) +
                        " bytes, more than the limit of " +
                        std::to_string(options.max_footer_bytes));
  }
  if (length > file_size - kMinFileBytes) {
    return CorruptError(Prefix(file) + "footer of " + std::to_string(length) +
                        " bytes in a file of " + std::to_string(file_size));
  }
  return length;
}

namespace {

// DecodeFooter's steps into *f; with `reuse` (f->schema_source) the schema
// is kept when its bytes are the last decode's.
Status DecodeInto(std::string_view metadata, uint64_t file_size, std::string_view file,
                  const FooterOptions& options, FileFooter* f, SchemaReuse* reuse) {
  f->file_size = file_size;
  f->metadata_length = static_cast<uint32_t>(metadata.size());
  Status decoded = DecodeFileMetaDataInto(metadata, options.thrift, options.metadata_fields,
                                          &f->meta, reuse);
  // Schema elements decoded afresh describe f->schema only once it is built
  // from them: until then (an error returns first) the bytes are unknown.
  const bool build = !reuse || !reuse->kept;
  std::string built_from;
  if (reuse && build) built_from = std::exchange(reuse->bytes, std::string());
  if (!decoded.ok()) return decoded.WithContext(std::string(file) + ": footer");
  if (f->meta.encrypted) {
    return UnimplementedError(Prefix(file) + "the file is encrypted (signed plaintext footer)");
  }
  if (build) {
    SLUICE_ASSIGN_OR_RETURN(f->schema, BuildSchema(f->meta, file));
    if (reuse) reuse->bytes = std::move(built_from);
  }
  if (metadata.size() + kMinFileBytes > file_size) {
    return CorruptError(Prefix(file) + "footer of " + std::to_string(metadata.size()) +
                        " bytes in a file of " + std::to_string(file_size));
  }
  const uint64_t data_end = file_size - kTrailerBytes - metadata.size();
  uint64_t rows = 0;
  f->chunk_ranges.resize(f->meta.row_groups.size());
  for (size_t rg = 0; rg < f->meta.row_groups.size(); ++rg) {
    const RowGroup& g = f->meta.row_groups[rg];
    if (g.columns.size() != f->schema.leaves.size()) {
      return CorruptError(Prefix(file) + "row group " + std::to_string(rg) + " has " +
                          std::to_string(g.columns.size()) + " column chunks, the schema " +
                          std::to_string(f->schema.leaves.size()) + " leaf columns");
    }
    rows += static_cast<uint64_t>(g.num_rows);  // each < 2^63: no overflow in two
    if (rows > static_cast<uint64_t>(INT64_MAX)) {
      return CorruptError(Prefix(file) + "the row groups' rows add up past 2^63");
    }
    f->chunk_ranges[rg].resize(g.columns.size());
    for (size_t leaf = 0; leaf < g.columns.size(); ++leaf) {
      SLUICE_RETURN_IF_ERROR(
          CheckChunk(*f, rg, leaf, file, data_end, &f->chunk_ranges[rg][leaf]));
    }
  }
  if (rows != static_cast<uint64_t>(f->meta.num_rows)) {
    return CorruptError(Prefix(file) + "the row groups hold " + std::to_string(rows) +
                        " rows, the footer says " + std::to_string(f->meta.num_rows));
  }
  return Status::Ok();
}

}  // namespace

Result<FileFooter> DecodeFooter(std::string_view metadata, uint64_t file_size,
                                std::string_view file, const FooterOptions& options) {
  FileFooter f;
  SLUICE_RETURN_IF_ERROR(DecodeInto(metadata, file_size, file, options, &f, nullptr));
  return f;
}

Status DecodeFooterInto(std::string_view metadata, uint64_t file_size, std::string_view file,
                        const FooterOptions& options, FileFooter* footer) {
  return DecodeInto(metadata, file_size, file, options, footer, &footer->schema_source);
}

Result<FileFooter> ReadFooter(uint64_t file_size, const RangeReader& read, std::string_view file,
                              const FooterOptions& options, bool check_head_magic) {
  const auto read_range = [&](ByteRange r, std::string* out) -> Status {
    Status s = read(r.offset, r.size, out);
    if (s.ok() && out->size() != r.size) {
      s = IoError("read " + std::to_string(out->size()) + " bytes");
    }
    return s.WithContext(std::string(file) + ": reading bytes [" + std::to_string(r.offset) +
                         ", " + std::to_string(r.offset + r.size) + ")");
  };
  if (file_size < kMinFileBytes) {
    return ParseFooterLength({}, file_size, file, options).status();
  }
  const ByteRange tail_range = FooterTailRange(file_size, options);
  std::string tail;
  SLUICE_RETURN_IF_ERROR(read_range(tail_range, &tail));
  SLUICE_ASSIGN_OR_RETURN(const uint32_t length, ParseFooterLength(tail, file_size, file, options));
  std::string_view metadata;
  std::string more;
  if (length + kTrailerBytes <= tail.size()) {
    metadata = std::string_view(tail).substr(tail.size() - kTrailerBytes - length, length);
  } else {
    // Only the part the tail lacks; the rest is already here.
    const uint64_t start = file_size - kTrailerBytes - length;
    SLUICE_RETURN_IF_ERROR(read_range(ByteRange{start, tail_range.offset - start}, &more));
    more.append(tail, 0, tail.size() - kTrailerBytes);
    metadata = more;
  }
  if (check_head_magic) {
    std::string head;
    if (tail_range.offset == 0) {
      head = tail.substr(0, 4);
    } else {
      SLUICE_RETURN_IF_ERROR(read_range(ByteRange{0, 4}, &head));
    }
    if (head != kParquetMagic) {
      return CorruptError(Prefix(file) + "not a Parquet file: it starts with \"" +
                          HexEncode(head) + "\" (hex), not \"PAR1\"");
    }
  }
  return DecodeFooter(metadata, file_size, file, options);
}

}  // namespace sluice::parquet

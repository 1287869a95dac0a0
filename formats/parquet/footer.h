// Reading a Parquet file's footer from ranged reads, as a streaming reader
// does: one read of the file's tail (a first guess of its size), a second
// only when the footer is larger than that guess.
//
// Layout: "PAR1", the column chunks, the FileMetaData (Thrift compact), its
// length as 4 bytes little-endian, "PAR1". ("PARE" at the end is a file with
// an encrypted footer, which this reader does not read.)
//
// Checks: the magic at the end (and at the start, see below), the footer
// length against the file size and a cap, the metadata (metadata_decoder.h)
// and schema (schema.h), that the row groups' rows add up to the file's,
// and for every column chunk: its metadata present and in this file (no
// file_path, not encrypted), its path and physical type those of the
// schema's leaf at its position, and its bytes, from its first page
// (dictionary page when there is one) for total_compressed_size bytes,
// inside [4, start of the footer). So a ranged read of a chunk computed from
// a FileFooter never goes outside the file's data.
//
// Every error starts with the file's name (`file`, used for nothing else).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/metadata_decoder.h"
#include "formats/parquet/schema.h"
#include "formats/parquet/thrift_compact.h"

namespace sluice::parquet {

inline constexpr std::string_view kParquetMagic = "PAR1";

struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct FooterOptions {
  uint64_t first_read_bytes = 64 << 10;  // the tail's first guess
  uint32_t max_footer_bytes = 64u << 20;  // a larger footer is refused
  ThriftLimits thrift;
  // kForIndex: a footer for an index (metadata_decoder.h), whose chunks
  // lack their encodings and statistics; the checks below are the same.
  MetadataFields metadata_fields = MetadataFields::kAll;
};

// A decoded, validated footer. Values; safe to share between threads.
struct FileFooter {
  uint64_t file_size = 0;
  uint32_t metadata_length = 0;  // bytes of the serialized FileMetaData
  FileMetaData meta;
  Schema schema;
  // chunk_ranges[row group][leaf]: the chunk's pages in the file.
  std::vector<std::vector<ByteRange>> chunk_ranges;
  // The schema list's wire bytes that meta.schema and schema were decoded
  // and built from, for DecodeFooterInto (empty unless it made them).
  SchemaReuse schema_source;

  const ColumnMetaData& chunk(size_t row_group, size_t leaf) const {
    return *meta.row_groups[row_group].columns[leaf].meta_data;
  }
};

// The tail to read first: the last min(file_size, first_read_bytes) bytes.
ByteRange FooterTailRange(uint64_t file_size, const FooterOptions& options = {});

// From a tail of the file (its last tail.size() bytes, at least 8): the
// FileMetaData's length, checked against the file size and the cap. The
// FileMetaData is the `length` bytes before the last 8.
Result<uint32_t> ParseFooterLength(std::string_view tail, uint64_t file_size,
                                   std::string_view file, const FooterOptions& options = {});

// Decodes and validates the FileMetaData (exactly `metadata_length` bytes).
Result<FileFooter> DecodeFooter(std::string_view metadata, uint64_t file_size,
                                std::string_view file, const FooterOptions& options = {});

// DecodeFooter into *footer, which may hold the footer of an earlier file:
// its storage is reused (a decoding thread's one FileFooter for file after
// file), and when this footer's schema list has the bytes of the one
// before, its SchemaElements and Schema are kept, neither decoded nor
// built again. The same values and errors as DecodeFooter; after an error
// *footer is unspecified but can be decoded into again.
Status DecodeFooterInto(std::string_view metadata, uint64_t file_size, std::string_view file,
                        const FooterOptions& options, FileFooter* footer);

// Reads `size` bytes at `offset` of the file into *out (replacing its
// contents); anything but exactly `size` bytes is an error it reports.
using RangeReader = std::function<Status(uint64_t offset, uint64_t size, std::string* out)>;

// The whole sequence over `read`: the tail, a second read when the footer
// is longer than the tail holds, and the magic at the start of the file,
// checked from the tail when it covers the file and otherwise by a 4-byte
// read unless `check_head_magic` is false (a streaming reader that checks
// it with its first read of data may skip it). A read's error is passed on
// with "<file>: reading bytes [<from>, <to>): " prepended.
Result<FileFooter> ReadFooter(uint64_t file_size, const RangeReader& read, std::string_view file,
                              const FooterOptions& options = {}, bool check_head_magic = true);

}  // namespace sluice::parquet

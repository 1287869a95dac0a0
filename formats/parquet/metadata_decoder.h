// Decodes the footer's FileMetaData and a page's PageHeader from the Thrift
// compact protocol into the values of metadata.h.
//
// Strict: a required field that is missing, a field of the wrong wire type,
// or a value out of its range (a negative count or size, a LogicalType
// INTEGER bit width other than 8/16/32/64, a union with two members) is
// kCorrupt; unknown fields of any type are skipped (newer writers add them).
// The decoders neither check offsets against a file (footer.h does) nor
// interpret the schema (schema.h does).
//
// Errors are kCorrupt with the path of fields down to the fault and the byte
// offset inside `bytes`: "FileMetaData field 4: element 0: RowGroup field 1:
// element 2: ColumnChunk field 3: offset 812: ColumnMetaData: required field
// 9 (data_page_offset) missing". Callers prepend the file name.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/metadata.h"
#include "formats/parquet/thrift_compact.h"

namespace sluice::parquet {

// Which fields DecodeFileMetaData decodes. kForIndex (a dataset's index,
// which reads the schema, the row groups' rows and each chunk's type, path,
// codec, sizes and page offsets) skips, without decoding or allocating, the
// file's key_value_metadata and created_by and each chunk's encodings,
// key_value_metadata, index_page_offset, statistics, encoding_stats, bloom
// filter and page index offsets: they are left empty. Skipped fields are
// still walked, their wire types checked (a malformed one is the error a
// full decode gives) and required ones still required; what is inside them
// is not checked (a negative null_count, say, or a Statistics field of
// another type).
enum class MetadataFields : uint8_t { kAll, kForIndex };

// `bytes` is the whole serialized FileMetaData (the footer between the file's
// data and its length + "PAR1"). Bytes left after the struct are an error,
// except in a file whose footer is signed (plaintext-footer encryption), where
// the signature follows it.
Result<FileMetaData> DecodeFileMetaData(std::string_view bytes, ThriftLimits limits = {},
                                        MetadataFields fields = MetadataFields::kAll);

// The values the index's quick walk skipped last of the fields a writer
// repeats, file after file and chunk after chunk: one equal again is
// stepped over after a comparison (ThriftCompactDecoder::SkipQuickAsBefore).
// Statistics are not kept: they differ chunk to chunk.
struct SkippedFields {
  ThriftCompactDecoder::SkippedValue key_value_metadata;  // FileMetaData's
  ThriftCompactDecoder::SkippedValue column_orders;
  ThriftCompactDecoder::SkippedValue encodings;  // a ColumnMetaData's
  ThriftCompactDecoder::SkippedValue chunk_key_value_metadata;
  ThriftCompactDecoder::SkippedValue encoding_stats;
};

// What a decode into a FileMetaData that is used again for file after file
// keeps of its schema: the schema list's wire bytes (and the limits) of
// the elements it holds. A footer whose list has the same bytes (as a
// dataset's files written by one writer do) keeps them: they are not
// decoded again. Also what the index's quick walk skipped last.
struct SchemaReuse {
  std::string bytes;  // empty: unknown, the next list is decoded
  ThriftLimits limits;
  bool kept = false;  // set by each decode: the schema elements were kept
  SkippedFields skipped;
};

// DecodeFileMetaData into *out, which may hold an earlier decode: every
// field is set as a fresh decode sets it (the schema's and row groups'
// vectors and their chunks' ranges keep their storage), and with `reuse`
// (nullptr: none) the schema kept as above. The result and the errors are
// DecodeFileMetaData's. After an error *out is unspecified, but `reuse`
// still describes out->schema.
Status DecodeFileMetaDataInto(std::string_view bytes, ThriftLimits limits, MetadataFields fields,
                              FileMetaData* out, SchemaReuse* reuse);

// DecodeFileMetaDataInto's two walks, for tests that compare them. The
// index's fields (kForIndex) are first walked quick: every check made,
// but only a bool answered (no Status made a field); only when it answers
// false is the footer decoded again by the checked walk, which makes the
// error. The quick walk accepts exactly what the checked one accepts and
// sets the same values; after false *out is unspecified (and, without
// `reuse`, its schema may hold elements).
bool DecodeFileMetaDataForIndexQuick(std::string_view bytes, ThriftLimits limits,
                                     FileMetaData* out, SchemaReuse* reuse);
Status DecodeFileMetaDataCheckedInto(std::string_view bytes, ThriftLimits limits,
                                     MetadataFields fields, FileMetaData* out,
                                     SchemaReuse* reuse);

// Decodes the PageHeader at the start of `bytes` (which may go on into the
// page itself) and sets `*header_size` to the bytes it took. Besides the
// required fields: sizes must not be negative, and the member for the page's
// type (data_page_header for DATA_PAGE, ...) must be present.
Result<PageHeader> DecodePageHeader(std::string_view bytes, size_t* header_size,
                                    ThriftLimits limits = {});

}  // namespace sluice::parquet

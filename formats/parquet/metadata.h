// The Parquet footer's metadata and page headers as plain values, with the
// field ids and enum numbers of the specification (parquet-format's
// parquet.thrift). Decoding lives in metadata_decoder.h.
//
// Enum fields hold the number the file stored, which may be one this reader
// does not know (a newer writer's encoding, say): decoding keeps it, and the
// part that has to act on it (schema, page reader) refuses it by name.
// Values only; copyable; no invariants beyond what the decoder checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::parquet {

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // Hadoop-framed LZ4, deprecated
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class TimeUnit : uint8_t { kMillis, kMicros, kNanos };

// Names as the specification spells them ("INT32", "RLE_DICTIONARY",
// "SNAPPY", "DATA_PAGE_V2", "UTF8", "MICROS"); a number this reader does not
// know prints as e.g. "Encoding(12)".
std::string PhysicalTypeName(PhysicalType t);
std::string ConvertedTypeName(ConvertedType t);
std::string RepetitionName(Repetition r);
std::string EncodingName(Encoding e);
std::string CompressionCodecName(CompressionCodec c);
std::string PageTypeName(PageType t);
std::string TimeUnitName(TimeUnit u);

// The LogicalType union (SchemaElement field 10), flattened.
struct LogicalType {
  enum class Kind : uint8_t {
    kNone,  // the field is absent
    kString, kMap, kList, kEnum, kDecimal, kDate, kTime, kTimestamp, kInteger,
    kUnknown,  // "always null" (thrift: UNKNOWN / NullType)
    kJson, kBson, kUuid, kFloat16, kVariant, kGeometry, kGeography,
    kUnrecognized,  // a union member this reader does not know: other_id
  };
  Kind kind = Kind::kNone;
  int16_t other_id = 0;        // kUnrecognized: the union's field id
  int32_t scale = 0;           // kDecimal
  int32_t precision = 0;       // kDecimal
  TimeUnit unit = TimeUnit::kMillis;  // kTime, kTimestamp
  bool adjusted_to_utc = false;       // kTime, kTimestamp
  int8_t bit_width = 0;        // kInteger: 8, 16, 32 or 64
  bool is_signed = false;      // kInteger
};

// "STRING", "DECIMAL(10,2)", "TIMESTAMP(MICROS,UTC)", "TIME(MILLIS,local)",
// "INTEGER(8,unsigned)", "LogicalType(20)"; "" for kNone.
std::string LogicalTypeName(const LogicalType& t);

struct SchemaElement {
  std::optional<PhysicalType> type;  // absent for groups
  std::optional<int32_t> type_length;
  std::optional<Repetition> repetition;  // absent for the root
  std::string name;
  std::optional<int32_t> num_children;   // groups only
  std::optional<ConvertedType> converted_type;
  std::optional<int32_t> scale;
  std::optional<int32_t> precision;
  std::optional<int32_t> field_id;
  LogicalType logical_type;
};

struct Statistics {
  std::optional<std::string> max;  // deprecated: signed order
  std::optional<std::string> min;
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  std::optional<std::string> max_value;
  std::optional<std::string> min_value;
  std::optional<bool> is_max_value_exact;
  std::optional<bool> is_min_value_exact;
  std::optional<int64_t> nan_count;
};

struct PageEncodingStats {
  PageType page_type = PageType::kDataPage;
  Encoding encoding = Encoding::kPlain;
  int32_t count = 0;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  CompressionCodec codec = CompressionCodec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;  // pages including their headers
  int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
  std::vector<PageEncodingStats> encoding_stats;
  std::optional<int64_t> bloom_filter_offset;
  std::optional<int32_t> bloom_filter_length;
};

struct ColumnChunk {
  std::optional<std::string> file_path;  // data in another file (not supported)
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;
  std::optional<int64_t> column_index_offset;
  std::optional<int32_t> column_index_length;
  bool encrypted = false;  // crypto_metadata or encrypted_column_metadata set
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
};

struct FileMetaData {
  int32_t version = 0;
  std::vector<SchemaElement> schema;  // depth-first, the root first
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  bool encrypted = false;  // encryption_algorithm set (plaintext footer)
};

struct DataPageHeader {
  int32_t num_values = 0;  // including nulls
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  std::optional<Statistics> statistics;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  std::optional<bool> is_sorted;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;  // excluding this header
  int32_t compressed_page_size = 0;
  std::optional<uint32_t> crc;  // CRC-32 of the page's stored bytes
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
};

}  // namespace sluice::parquet

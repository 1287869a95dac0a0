// The specification's spelling of each enum of metadata.h.
#include <array>
#include <string_view>

#include "formats/parquet/metadata.h"

namespace sluice::parquet {
namespace {

template <size_t N>
std::string Lookup(const std::array<std::string_view, N>& names, int32_t v,
                   std::string_view what) {
  if (v >= 0 && static_cast<size_t>(v) < N && !names[static_cast<size_t>(v)].empty()) {
    return std::string(names[static_cast<size_t>(v)]);
  }
  return std::string(what) + "(" + std::to_string(v) + ")";
}

}  // namespace

std::string PhysicalTypeName(PhysicalType t) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
      "FIXED_LEN_BYTE_ARRAY"};
  return Lookup(kNames, static_cast<int32_t>(t), "Type");
}

std::string ConvertedTypeName(ConvertedType t) {
  static constexpr std::array<std::string_view, 22> kNames = {
      "UTF8",   "MAP",    "MAP_KEY_VALUE", "LIST",    "ENUM",    "DECIMAL",
      "DATE",   "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS",
      "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64",
      "JSON",   "BSON",   "INTERVAL"};
  return Lookup(kNames, static_cast<int32_t>(t), "ConvertedType");
}

std::string RepetitionName(Repetition r) {
  static constexpr std::array<std::string_view, 3> kNames = {"REQUIRED", "OPTIONAL", "REPEATED"};
  return Lookup(kNames, static_cast<int32_t>(r), "FieldRepetitionType");
}

std::string EncodingName(Encoding e) {
  static constexpr std::array<std::string_view, 10> kNames = {
      "PLAIN", "", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
      "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return Lookup(kNames, static_cast<int32_t>(e), "Encoding");
}

std::string CompressionCodecName(CompressionCodec c) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return Lookup(kNames, static_cast<int32_t>(c), "CompressionCodec");
}

std::string PageTypeName(PageType t) {
  static constexpr std::array<std::string_view, 4> kNames = {
      "DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
  return Lookup(kNames, static_cast<int32_t>(t), "PageType");
}

std::string TimeUnitName(TimeUnit u) {
  switch (u) {
    case TimeUnit::kMillis: return "MILLIS";
    case TimeUnit::kMicros: return "MICROS";
    case TimeUnit::kNanos: return "NANOS";
  }
  return "TimeUnit(" + std::to_string(static_cast<int>(u)) + ")";
}

std::string LogicalTypeName(const LogicalType& t) {
  using K = LogicalType::Kind;
  const auto time = [&](const char* name) {
    return std::string(name) + "(" + TimeUnitName(t.unit) + "," +
           (t.adjusted_to_utc ? "UTC" : "local") + ")";
  };
  switch (t.kind) {
    case K::kNone: return "";
    case K::kString: return "STRING";
    case K::kMap: return "MAP";
    case K::kList: return "LIST";
    case K::kEnum: return "ENUM";
    case K::kDecimal:
      return "DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case K::kDate: return "DATE";
    case K::kTime: return time("TIME");
    case K::kTimestamp: return time("TIMESTAMP");
    case K::kInteger:
      return "INTEGER(" + std::to_string(t.bit_width) + "," +
             (t.is_signed ? "signed" : "unsigned") + ")";
    case K::kUnknown: return "UNKNOWN";
    case K::kJson: return "JSON";
    case K::kBson: return "BSON";
    case K::kUuid: return "UUID";
    case K::kFloat16: return "FLOAT16";
    case K::kVariant: return "VARIANT";
    case K::kGeometry: return "GEOMETRY";
    case K::kGeography: return "GEOGRAPHY";
    case K::kUnrecognized: break;
  }
  return "LogicalType(" + std::to_string(t.other_id) + ")";
}

}  // namespace sluice::parquet

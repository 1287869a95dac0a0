// The hand-made footer the footer and index tests share: a file of one
// INT32 column "a", one row group, its chunk's pages after "PAR1" and a
// few bytes of data. Each field of TestFooterSpec is a place to change or
// break it in one precise way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "tests/formats/parquet/thrift_test_writer.h"

namespace sluice::parquet::testing {

struct TestFooterSpec {
  int64_t chunk_offset = 4;
  int64_t chunk_size = 10;
  int64_t rows = 5;         // the row group's and its chunk's
  int64_t footer_rows = 5;  // the file's
  std::string leaf = "a";   // the schema's column
  int32_t leaf_type = 1;    // its physical type (-1: none, a schema BuildSchema refuses)
  std::string path = "a";   // the chunk's path_in_schema
  int32_t type = 1;         // the chunk's physical type: INT32
  std::string padding;      // when set, key/value metadata making the footer larger
  bool statistics = false;  // the chunk has Statistics (max_value, min_value)
  // Inside the statistics, a field header of the unknown type 14 (which an
  // index's decode skips but must walk).
  bool bad_statistics = false;
};

// The serialized FileMetaData.
inline std::string TestFooter(const TestFooterSpec& s = {}) {
  ThriftWriter w;
  w.BeginStruct();
  w.I32(1, 1);
  w.List(2, 12, 2);
  w.BeginStruct();
  w.Binary(4, "schema");
  w.I32(5, 1);
  w.EndStruct();
  w.BeginStruct();
  if (s.leaf_type >= 0) w.I32(1, s.leaf_type);
  w.I32(3, 0);
  w.Binary(4, s.leaf);
  w.EndStruct();
  w.I64(3, s.footer_rows);
  w.List(4, 12, 1);
  w.BeginStruct();
  w.List(1, 12, 1);
  w.BeginStruct();
  w.I64(2, s.chunk_offset);
  w.Struct(3);
  w.I32(1, s.type);
  w.I32List(2, {0});
  w.StringList(3, {s.path});
  w.I32(4, 0);
  w.I64(5, s.rows);
  w.I64(6, s.chunk_size);
  w.I64(7, s.chunk_size);
  w.I64(9, s.chunk_offset);
  if (s.statistics || s.bad_statistics) {
    w.Struct(12);
    w.Binary(5, "max");
    if (s.bad_statistics) w.Field(6, 14);
    w.Binary(6, "min");
    w.EndStruct();
  }
  w.EndStruct();
  w.EndStruct();
  w.I64(2, s.chunk_size);
  w.I64(3, s.rows);
  w.EndStruct();
  if (!s.padding.empty()) {
    w.List(5, 12, 1);
    w.BeginStruct();
    w.Binary(1, "pad");
    w.Binary(2, s.padding);
    w.EndStruct();
  }
  w.EndStruct();
  return w.bytes;
}

// A whole file: "PAR1", `data_bytes` bytes of data, the metadata, its
// length and "PAR1".
inline std::string TestParquetFile(const std::string& metadata, size_t data_bytes = 10) {
  std::string f = "PAR1" + std::string(data_bytes, 'd') + metadata;
  AppendLE<uint32_t>(f, static_cast<uint32_t>(metadata.size()));
  return f + "PAR1";
}

}  // namespace sluice::parquet::testing

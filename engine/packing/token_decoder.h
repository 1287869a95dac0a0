// A document's token ids from one field of the token column, as each format
// stores them: MDS ndarray of integers (any ndarray form) or `bytes` of
// little-endian integers (PackSpec::bytes_dtype), JSONL a JSON array of
// integers, Parquet list<int8..int64 / uint8..uint64> (packed values).
// Immutable once made; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "formats/mds/column_encoding.h"

namespace sluice {

class TokenDecoder {
 public:
  // For column `column` of encoding `encoding` in a stream of format
  // `format`, by what the format's fields hold (its descriptor's
  // FieldForm): stored bytes with an MDS encoding ("mds", and "raw" files'
  // bytes), JSON text ("json"), Parquet values ("parquet").
  // kInvalidArgument naming the column, format and encoding when its values
  // are not integers this reads.
  static Result<TokenDecoder> For(std::string_view format, std::string_view encoding,
                                  std::string_view column, std::string_view bytes_dtype);

  // Appends the field's token ids to `out`. A null field (Parquet's null
  // list) has none. kCorrupt naming the column when the bytes do not hold
  // what the encoding says.
  Status Append(const char* data, size_t size, std::vector<int64_t>* out) const;
  // How many ids Append would append, checked as Append checks them
  // (without widening them: a resume counts the documents it passes over).
  Result<uint64_t> Count(const char* data, size_t size) const;

 private:
  enum class Kind { kPacked, kNdarray, kJson };
  Kind kind_ = Kind::kPacked;
  unsigned width_ = 8;   // kPacked: bytes per value
  bool signed_ = true;   // kPacked
  ColumnEncoding mds_;   // kNdarray
  std::string what_;     // "column 'tokens' (ndarray:int32) of format mds"
};

}  // namespace sluice

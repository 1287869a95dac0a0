// What token packing makes: fixed-length rows of `seq_len` tokens from the
// documents of one column of token ids. Plain value; thread-safe to copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

enum class PackMethod {
  // Documents joined, each followed by eos_id, cut into rows; a row's
  // remainder starts the next row (LLM Foundry's ConcatTokensDataset).
  kConcat,
  // First-fit decreasing of each window of `bin_window` documents into rows
  // (a document longer than a row is split into row-sized pieces); the rest
  // of a row is pad_id, with segment ids and position ids per document.
  kBin,
};

struct PackSpec {
  std::string column;  // the column of token ids
  uint64_t seq_len = 0;
  int64_t eos_id = -1;  // appended after every document; -1: nothing appended
  int64_t pad_id = -1;  // fills a row's rest (bin, or concat's last row); -1: eos_id, else 0
  PackMethod method = PackMethod::kConcat;
  uint64_t bin_window = 256;  // documents per first-fit-decreasing window (bin)
  // Element type of a `bytes` MDS column of token ids (little-endian):
  // int16, int32, int64, uint16, uint32 or uint64.
  std::string bytes_dtype = "int64";
  // Concat: drop the epoch's last, partial row (LLM Foundry does) rather
  // than hand it out padded with pad_id.
  bool drop_last = true;

  int64_t padding() const { return pad_id >= 0 ? pad_id : (eos_id >= 0 ? eos_id : 0); }
};

// Rows are at most this long, so that a caller's buffer of rows cannot be
// sized by a hostile spec alone.
inline constexpr uint64_t kMaxSeqLen = uint64_t{1} << 24;

// From a JSON object {"column": "tokens", "seq_len": 4096, "eos_id": 0,
// "method": "concat" | "bin", "pad_id": .., "bin_window": ..,
// "bytes_dtype": .., "drop_last": ..} (eos_id and pad_id may be null).
// kInvalidArgument naming the key for a missing, unknown or bad key.
Result<PackSpec> ParsePackSpec(std::string_view json);

}  // namespace sluice

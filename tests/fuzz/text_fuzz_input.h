// The input layout of the split-shard fuzzers (jsonl_shard_fuzz,
// xsv_shard_fuzz): a control byte, a u16 (little-endian) meta file size,
// the meta file, then the data file. The entry's `samples` is the meta
// file's own count, so the fuzzer gets past that first check.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "formats/index/index.h"
#include "tests/fuzz/fuzz_util.h"

namespace sluice::fuzz {

struct SplitShardInput {
  uint8_t control = 0;
  std::string_view meta;
  std::string_view data;
};

inline SplitShardInput ReadSplitShardInput(const uint8_t* bytes, size_t size) {
  Input in(bytes, size);
  SplitShardInput out;
  out.control = in.Byte();
  out.meta = in.Take(in.U16());
  out.data = in.Rest();
  return out;
}

// Fills the file names, newline and samples of a split-format entry.
inline void FillSplitEntry(ShardEntry& e, const SplitShardInput& in, std::string_view ext) {
  e.version = 2;
  e.newline = (in.control & 1) ? "\r\n" : "\n";
  e.raw_data.basename = "shard.00000." + std::string(ext);
  e.raw_data.bytes = in.data.size();
  e.raw_meta = FileInfo{e.raw_data.basename + ".meta", in.meta.size(), {}};
  e.has_meta = true;
  uint32_t n = 0;
  if (in.meta.size() >= 4) std::memcpy(&n, in.meta.data(), 4);  // little-endian hosts
  e.samples = n;
}

// The stored line of sample i lies in `data` and ends with the newline.
template <typename Reader>
void CheckLine(const Reader& r, uint32_t i, std::string_view data) {
  auto line = r.Line(i);
  FUZZ_CHECK(line.ok(), "Line(%u) of %u: %s", i, r.size(), line.status().message().c_str());
  FUZZ_CHECK(Within(*line, data), "line %u outside the data file", i);
}

}  // namespace sluice::fuzz

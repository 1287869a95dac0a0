// The `.meta` file of Mosaic's split shard formats (JSONL and CSV/TSV/XSV):
//
//   u32 n                  number of samples (little-endian)
//   u32 offsets[n + 1]     absolute byte offsets of the lines in the data file
//   bytes config           json.dumps(writer config, sort_keys=True)
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

// A validated meta file. Views point into the caller's meta bytes and live
// as long as those bytes.
class SplitMeta {
 public:
  // Validates `meta` against the data file it describes: the header fits,
  // n == `expected_samples` (the index entry's `samples`), offsets[0] ==
  // `first_offset` (0 for JSONL, the header length for XSV), offsets never
  // decrease, offsets[n] == data_size, and the config is a JSON object.
  // Errors are kCorrupt and name `meta_name` / `data_name` and the offset.
  static Result<SplitMeta> Parse(std::string_view meta, uint64_t data_size,
                                 uint64_t expected_samples, uint32_t first_offset,
                                 std::string_view meta_name,
                                 std::string_view data_name);

  uint32_t size() const { return n_; }
  // offsets[i] for i in [0, n]; the caller keeps i <= size().
  uint32_t offset(uint32_t i) const;
  // The config JSON text at the end of the meta file.
  std::string_view config() const { return config_; }

 private:
  uint32_t n_ = 0;
  std::string_view offsets_;  // (n + 1) little-endian u32
  std::string_view config_;
};

// Builds a meta file. `offsets` holds n + 1 entries (n = offsets.size() - 1);
// `config_json` is appended as is.
std::string EncodeSplitMeta(const std::vector<uint32_t>& offsets,
                            std::string_view config_json);

}  // namespace sluice

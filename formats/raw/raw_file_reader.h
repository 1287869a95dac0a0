// The "raw" format: a dataset of unconverted files (images, clips, texts)
// where every file is a shard of one sample whose one field, column
// kRawFileColumn ("data", encoding "bytes"), is the file's bytes. There is
// no index.json: file_listing.h builds the index from a listing.
//
// Immutable after Open; thread-safe. The reader keeps a view of `data`,
// which must outlive it.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "formats/index/index.h"

namespace sluice {

inline constexpr std::string_view kRawFormat = "raw";
inline constexpr std::string_view kRawFileColumn = "data";
inline constexpr std::string_view kRawFileEncoding = "bytes";

class RawFileReader {
 public:
  RawFileReader() = default;

  // `data`: the whole file. The entry must declare one sample and the
  // file's size (a listing records it): else kCorrupt naming the file.
  static Result<RawFileReader> Open(const ShardEntry& entry, std::string_view data);

  // The one sample's bytes (sample 0); kOutOfRange for any other sample.
  Result<std::string_view> Sample(uint32_t i) const;

 private:
  std::string_view name_;  // the entry's file name, for errors (outlives the reader with the entry)
  std::string_view data_;
};

}  // namespace sluice

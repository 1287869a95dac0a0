// A shard's configuration (the ShardEntry fields its shards share: format,
// version, columns, compression, hashes, newline, separator, size_limit)
// as bytes: the key a ShardTable deduplicates configurations by, and how
// its binary index file stores them (shard_table_layout.h).
//
// Length-prefixed little-endian fields in a fixed order; decoding checks
// every length against the bytes left. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/index/index.h"

namespace sluice {

// Appends `entry`'s configuration fields to `out` (its per-shard fields,
// samples and files, are not part of it).
void EncodeShardConfig(const ShardEntry& entry, std::string* out);

// Decodes one configuration from the front of `*in` and advances it past
// it: a ShardEntry with the configuration fields set and no files.
// kCorrupt naming `source` when the bytes end early or a count exceeds
// what is left.
Result<ShardEntry> DecodeShardConfig(std::string_view* in, std::string_view source);

}  // namespace sluice

// The fast path of ShardTable::FromIndexJson (index_table_parse.cc), apart
// so that tests can hold it to the checking parser (ParseIndexEntries).
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "formats/index/shard_table.h"

namespace sluice {

// index.json's text straight into a table, or nullopt when the text is not
// a case this path takes: any error, and anything unusual (keys Sluice
// does not read, keys with escapes). `json_text.data()` must be readable
// up to `readable_bytes` >= json_text.size() + kIndexJsonPadding. Never
// accepts a text ParseIndexEntries refuses; the table it gives is the one
// ParseIndexEntries feeding a ShardTable::Builder gives.
std::optional<ShardTable> ParseIndexTableFast(std::string_view json_text, size_t readable_bytes);

}  // namespace sluice

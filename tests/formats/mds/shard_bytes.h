// Test helper: the decompressed bytes of one compat shard.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "formats/index/index.h"

namespace sluice::testing {

// Reads <dataset>/<raw basename>, or <dataset>/<zip basename> decompressed.
Result<std::string> LoadShardBytes(std::string_view dataset, const ShardEntry& entry);

}  // namespace sluice::testing

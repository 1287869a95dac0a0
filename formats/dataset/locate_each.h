// SampleLocator::Locate over a whole order of ids at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "formats/dataset/sample_locator.h"

namespace sluice {

// For each k: shard[k] and local[k] (local may be null: shards only) as
// locator.Locate(ids[k]) returns them; every id must be in [0, total()).
// `shard` and `local` hold ids.size() entries. The previous id's shard is
// checked first, which spares most lookups where neighbours share a shard
// (an order in place, a shuffle block within a shard). This runs over every
// remaining position of a pass before its first sample, a resumption's
// included. Thread safety: as Locate.
void LocateEach(const SampleLocator& locator, std::span<const int64_t> ids, size_t* shard,
                uint32_t* local);

}  // namespace sluice

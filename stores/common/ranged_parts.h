// One range of an object received as several ranged reads at once, each
// written at its place in the caller's one buffer: a large object (a
// single pass's shard) comes over as many connections as the store allows
// for one object, instead of one connection's bandwidth.
//
// Runs on the store's executor (see stores/store.h).
#pragma once

#include <cstdint>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Bytes [offset, offset + length) of `key` (fewer at its end) into `into`
// (room for `length`; it must outlive the call), read as
// store.RangedParts(length, part_size) ranged reads at once
// (Store::GetRangeOnlyInto, `etag` as GetRangeOnlyOfVersion's: each part
// signed by its store, and resumed with a range by the store's client when
// the server cuts it short, as any ranged read), of equal length (the last
// shorter), each written at its offset. Returns how many bytes came: a
// part that comes short ends the object there (the parts after it hold
// nothing: a 416 for them is no error), and a part after it with bytes is
// kCorrupt (the object changed while it was read). A part's error is the
// store's (naming the object) with the part's byte range; after the first
// error no part starts, and those in flight are awaited.
boost::asio::awaitable<Result<uint64_t>> GetRangeInPartsInto(Store& store, std::string key,
                                                             uint64_t offset, uint64_t length,
                                                             char* into, uint64_t part_size,
                                                             std::string etag = {});

}  // namespace sluice

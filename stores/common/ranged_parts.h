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

#include "base/arrived_bytes.h"
#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// The one rule for how many ranged reads of one object run at once: a
// part per `part_size` bytes of `length` (1 when part_size is 0), at most
// `most` (the store's parts in flight per object) and at most `free` (its
// client's connections neither in use nor promised: a shard in 8 parts
// while 3 others download must leave them theirs, and the pool's limit is
// not to be queued past), and at least 1.
int RangedPartCount(uint64_t length, uint64_t part_size, int most, int free);

// Bytes [offset, offset + length) of `key` (fewer at its end) into `into`
// (room for `length`; it must outlive the call), read as
// store.ClaimRangedParts(length, part_size) ranged reads at once (their
// connections promised until the call returns)
// (Store::GetRangeOnlyInto, `version` as GetRangeOnlyOfVersion's: each part
// signed by its store, and resumed with a range by the store's client when
// the server cuts it short, as any ranged read), of equal length (the last
// shorter), each written at its offset. Returns how many bytes came: a
// part that comes short ends the object there (the parts after it hold
// nothing: a 416 for them is no error), and a part after it with bytes is
// kCorrupt (the object changed while it was read). The parts are of one
// version: a part without `version.etag` sent after an answer has come asks
// for the ETag that answer stated (ObjectVersion::stated), and a part whose
// answer is not of the first answer's version (PartsVersion: another
// ETag, or none where the first stated one, or one where it stated none)
// is kCorrupt naming both parts and ETags, its bytes not told to
// `arrived`. `version.stated`, if
// set, gets the first answer's statement. A part's error is the
// store's (naming the object) with the part's byte range; after the first
// error no part starts, and those in flight are awaited.
// `arrived` (may be null; must outlive the call): told of each part's bytes
// (at their offset in `into`) as they come off the socket (the HTTP
// stores: IntoProgress, every kBodyIntoReportBytes), once the part's
// answer was checked (its size, its ETag against the first answer's), so
// that readers may read them while the rest is received; a store that
// tells no progress (local files): as soon as the part has all of them.
// Bytes told stay told when their part fails later (they are the server's,
// of the one version); the error reaches readers of the rest through the
// owner, who Finishes `arrived`; it is told nothing else.
boost::asio::awaitable<Result<uint64_t>> GetRangeInPartsInto(Store& store, std::string key,
                                                             uint64_t offset, uint64_t length,
                                                             char* into, uint64_t part_size,
                                                             ObjectVersion version = {},
                                                             ArrivedBytes* arrived = nullptr);

}  // namespace sluice

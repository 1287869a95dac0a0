// Uploads in parts, shared by S3's multipart uploads (s3://, oci://, gs://)
// and Azure's block blobs: the choice between one Put and parts, and the
// parts sent concurrently with a bound on how many are in flight.
//
// Coroutines run on the store's executor (see stores/store.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// Uploads local file `path` of `size` bytes as `key` in parts of
// `part_size` bytes (the last one shorter).
using UploadInParts = std::function<boost::asio::awaitable<Status>(
    std::string key, std::string path, uint64_t size, uint64_t part_size)>;

// Store::PutFile for a store with a one-request Put and an upload in parts:
// validates `key`, then a file of up to `part_size` bytes goes through
// store.Put, a larger one through `upload`. Errors name the file or object.
boost::asio::awaitable<Status> PutFileInParts(Store& store, std::string key, std::string path,
                                              uint64_t part_size, UploadInParts upload);

// Awaits upload_part(i) for every i in [0, parts), at most `concurrency`
// (at least 1) at a time, parts started in increasing order. After the
// first error no new part starts; the ones in flight are awaited, and that
// first error is returned. `upload_part` records what it needs (an ETag, a
// block id) by part index, so the caller lists the parts in order whatever
// order they finish in.
boost::asio::awaitable<Status> ForEachPartConcurrently(
    uint64_t parts, int concurrency,
    std::function<boost::asio::awaitable<Status>(uint64_t part)> upload_part);

}  // namespace sluice

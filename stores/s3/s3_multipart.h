// S3's multipart upload of a local file: CreateMultipartUpload, the parts
// (concurrently, read from the file as they go), CompleteMultipartUpload,
// and AbortMultipartUpload when any step fails. Used by the S3 store's
// PutFile above its part size (stores/s3 only).
#pragma once

#include <cstdint>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/s3/s3_requests.h"

namespace sluice {

// Uploads local file `path` (`size` bytes) as the store's `key` in parts of
// `part` bytes, at most `upload_concurrency` in flight (each holds one part
// in memory). Errors: kInvalidArgument beyond S3's 10000 parts; a request's
// error with the object's URL (and the part number) as context; kCorrupt
// when S3 answers no UploadId or ETag; kIoError when S3 reports the
// completion's failure in a 200 body. Runs on `client`'s executor;
// `requests` and `client` must outlive the awaitable.
boost::asio::awaitable<Status> PutFileMultipart(const S3Requests& requests, HttpClient& client,
                                                int upload_concurrency, std::string key,
                                                std::string path, uint64_t size, uint64_t part);

}  // namespace sluice

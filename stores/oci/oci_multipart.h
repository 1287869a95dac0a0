// OCI Object Storage's multipart upload, as the OCI SDK's UploadManager
// drives it for a large object: CreateMultipartUpload (POST .../u, body
// {"object": NAME}), UploadPart per part (PUT .../u/NAME?uploadId=ID&
// uploadPartNum=N, N from 1, its ETag kept), CommitMultipartUpload (POST
// .../u/NAME?uploadId=ID, body {"partsToCommit": [{"partNum": N, "etag":
// E}, ...]}), and on any failure AbortMultipartUpload (DELETE
// .../u/NAME?uploadId=ID), best effort. The choice between one PUT and
// parts, and the bound on parts in flight, are stores/common/part_uploads.h's.
//
// Coroutines run on the store's executor; `target` must outlive them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"

namespace sluice {

struct OciMultipartTarget {
  HttpClient* client = nullptr;
  std::string base;    // {endpoint}/n/{ns}/b/{bucket}, no trailing '/'
  std::string object;  // the object's full name
  std::string root;    // for errors, with `key`
  std::string key;
  int concurrency = 4;  // parts in flight
  // The headers that authorize a request of `url`; with `json_body` (POST),
  // signed over the body as well (content-type application/json).
  // `json_body` must outlive the awaitable.
  std::function<boost::asio::awaitable<Result<HttpHeaders>>(
      HttpMethod method, const std::string& url, const std::string* json_body)>
      sign;
};

// Uploads local file `path` of `size` bytes in parts of `part` bytes (the
// last shorter; at most 10000 parts, as Object Storage allows). Errors name
// the object and, for a part, its number; the upload is aborted.
boost::asio::awaitable<Status> OciUploadInParts(const OciMultipartTarget& target,
                                                std::string path, uint64_t size, uint64_t part);

}  // namespace sluice

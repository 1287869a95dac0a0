// How an S3-compatible store addresses and authorizes its requests: the URL
// of an object or of the bucket (path or virtual-hosted style; the region's
// endpoint once S3 has named another region, see bucket_region.h), signed
// with SigV4 / GOOG4 or carrying a bearer token. Used by the store, its
// listing and its multipart uploads (stores/s3 only).
//
// Thread safety: immutable after construction but for the BucketRegion
// (thread-safe itself); Prepare() runs on the store's executor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/s3/bucket_region.h"
#include "stores/s3/s3_store.h"
#include "stores/signing/sigv4.h"

namespace sluice {

class S3Requests {
 public:
  // `region`: null when the store follows no region (gs://, oci://).
  S3Requests(S3StoreConfig config, std::shared_ptr<BucketRegion> region);

  const S3StoreConfig& config() const { return config_; }
  // "<scheme>://bucket[/prefix]": the store's root() and the base of its errors.
  const std::string& root() const { return root_; }
  BucketRegion* region() const { return region_.get(); }

  // The object's name in the bucket for the store's `key`.
  std::string FullKey(const std::string& key) const;
  // The object's URL, for error text.
  std::string ObjectUrl(const std::string& key) const;
  // `s` with the object's URL as context.
  Status Context(const Status& s, const std::string& key) const;

  // The request for `object_key` ("" = the bucket) with `query`, signed
  // over `payload_hash` ("" = the empty body's) or carrying the bearer
  // token. The credential is awaited (SharedCredential::AwaitGet), never
  // fetched on the calling thread. Errors: the credential's or the
  // signature's, with the root as context.
  boost::asio::awaitable<Result<HttpRequest>> Prepare(HttpMethod method, std::string object_key,
                                                      std::vector<SigningQueryParam> query,
                                                      std::string payload_hash) const;

 private:
  S3StoreConfig config_;
  std::shared_ptr<BucketRegion> region_;
  std::string root_;
};

// The bucket at its endpoint: the key of the process-wide memory of bucket
// regions (LearnedBucketRegion).
std::string S3BucketKey(const S3StoreConfig& config);

}  // namespace sluice

// The region an S3 bucket lives in, as S3 itself says it when a request was
// signed for (or sent to) another region: AuthorizationHeaderMalformed and
// PermanentRedirect errors name it (<Region>, or the <Endpoint> host), and
// so does the x-amz-bucket-region header (the only place for a HEAD's 301,
// which has no body). A
// store re-signs for the region it learns, and the process remembers it per
// bucket so that later stores of the bucket start right.
//
// Thread safety: every member and function is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// The region S3's error `body` names, if any: <Region> of
// AuthorizationHeaderMalformed / PermanentRedirect /
// IllegalLocationConstraintException, else the region in <Endpoint>
// ("bkt.s3.eu-west-1.amazonaws.com", "s3-eu-west-1...", "s3.amazonaws.com"
// = us-east-1). Only names of [a-z0-9-] are accepted.
std::optional<std::string> RegionNamedByS3Error(std::string_view body);

// The region this process learned for `bucket_key` (an endpoint and bucket,
// see BucketRegion), if any.
std::optional<std::string> LearnedBucketRegion(const std::string& bucket_key);

class BucketRegion {
 public:
  // `bucket_key` names the bucket at its endpoint (e.g. "aws/my-bucket");
  // `configured` is the region requests are signed for until S3 says otherwise.
  BucketRegion(std::string bucket_key, std::string configured);

  std::string region() const;
  // Bumped each time the region changes (a request prepared under an older
  // version may be retried once).
  uint64_t version() const { return version_.load(); }

  // Reads an S3 error body; when it names another region, switches to it,
  // remembers it process-wide and returns true.
  bool LearnFromError(std::string_view body);
  // Reads an error response's x-amz-bucket-region (`value`, "" when absent);
  // when it is a plausible region other than the current one, switches to it
  // as LearnFromError does and returns true.
  bool LearnFromRegionHeader(std::string_view value);

 private:
  bool Learn(const std::string& named);

  const std::string bucket_key_;
  mutable std::mutex mu_;
  std::string region_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace sluice

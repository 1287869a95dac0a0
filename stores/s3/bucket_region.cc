#include "stores/s3/bucket_region.h"

#include <map>

#include "stores/common/xml_lite.h"

namespace sluice {
namespace {

bool PlausibleRegion(std::string_view r) {
  if (r.empty() || r.size() > 32) return false;
  for (char c : r) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

std::optional<std::string> RegionOfEndpoint(std::string_view host) {
  constexpr std::string_view kSuffix = ".amazonaws.com";
  if (host.size() <= kSuffix.size() || host.substr(host.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  std::string_view rest = host.substr(0, host.size() - kSuffix.size());
  size_t dot = rest.rfind('.');
  std::string_view last = dot == std::string_view::npos ? rest : rest.substr(dot + 1);
  if (last == "s3") return std::string("us-east-1");
  if (last.rfind("s3-", 0) == 0) last.remove_prefix(3);
  if (!PlausibleRegion(last)) return std::nullopt;
  return std::string(last);
}

std::mutex& LearnedMu() {
  static auto* mu = new std::mutex;  // leaked: used until process exit
  return *mu;
}
std::map<std::string, std::string>& Learned() {
  static auto* learned = new std::map<std::string, std::string>;
  return *learned;
}

}  // namespace

std::optional<std::string> RegionNamedByS3Error(std::string_view body) {
  std::string_view code = XmlFirst(body, "Code");
  if (code != "AuthorizationHeaderMalformed" && code != "PermanentRedirect" &&
      code != "IllegalLocationConstraintException") {
    return std::nullopt;
  }
  std::string_view region = XmlFirst(body, "Region");
  if (PlausibleRegion(region)) return std::string(region);
  return RegionOfEndpoint(XmlFirst(body, "Endpoint"));
}

std::optional<std::string> LearnedBucketRegion(const std::string& bucket_key) {
  std::lock_guard<std::mutex> lock(LearnedMu());
  auto it = Learned().find(bucket_key);
  if (it == Learned().end()) return std::nullopt;
  return it->second;
}

BucketRegion::BucketRegion(std::string bucket_key, std::string configured)
    : bucket_key_(std::move(bucket_key)), region_(std::move(configured)) {}

std::string BucketRegion::region() const {
  std::lock_guard<std::mutex> lock(mu_);
  return region_;
}

bool BucketRegion::LearnFromError(std::string_view body) {
  std::optional<std::string> named = RegionNamedByS3Error(body);
  return named && Learn(*named);
}

bool BucketRegion::LearnFromRegionHeader(std::string_view value) {
  return PlausibleRegion(value) && Learn(std::string(value));
}

bool BucketRegion::Learn(const std::string& named) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (named == region_) return false;
    region_ = named;
    ++version_;
  }
  std::lock_guard<std::mutex> lock(LearnedMu());
  Learned()[bucket_key_] = named;
  return true;
}

}  // namespace sluice

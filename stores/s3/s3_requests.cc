#include "stores/s3/s3_requests.h"

#include <ctime>

#include "stores/common/object_http.h"
#include "stores/common/store_keys.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace

S3Requests::S3Requests(S3StoreConfig config, std::shared_ptr<BucketRegion> region)
    : config_(std::move(config)), region_(std::move(region)) {
  root_ = config_.scheme + "://" + config_.bucket +
          (config_.prefix.empty() ? "" : "/" + config_.prefix);
}

std::string S3Requests::FullKey(const std::string& key) const {
  return JoinKey(config_.prefix, key);
}

std::string S3Requests::ObjectUrl(const std::string& key) const { return JoinKey(root_, key); }

Status S3Requests::Context(const Status& s, const std::string& key) const {
  return ObjectError(s, root_, key);
}

boost::asio::awaitable<Result<HttpRequest>> S3Requests::Prepare(
    HttpMethod method, std::string object_key, std::vector<SigningQueryParam> query,
    std::string payload_hash) const {
  const Url& ep = config_.endpoint;
  SigV4Config sigv4 = config_.sigv4;
  std::string ep_host = ep.host;
  if (region_) {
    sigv4.region = region_->region();
    if (config_.regional_aws_endpoint) ep_host = "s3." + sigv4.region + ".amazonaws.com";
  }
  std::string host = config_.path_style ? ep_host : config_.bucket + "." + ep_host;
  std::string authority = ep.is_ipv6_literal() ? "[" + host + "]" : host;
  if (ep.explicit_port) authority += ":" + std::to_string(ep.port);
  std::string path;
  if (config_.path_style) path = "/" + EncodeUriPath(config_.bucket);
  if (!object_key.empty()) {
    path += "/" + EncodeUriPath(object_key);
  } else if (!config_.path_style) {
    path = "/";
  }
  HttpRequest req;
  req.method = method;
  req.url = ep.scheme + "://" + authority + path +
            (query.empty() ? "" : "?" + EncodeQueryString(query));
  req.headers = config_.extra_headers;
  if (config_.auth == S3Auth::kSigV4) {
    SigningRequest sr;
    sr.method = HttpMethodName(method);
    sr.path = path;
    sr.query = std::move(query);
    sr.headers.push_back({"host", authority});
    for (const auto& [name, value] : config_.extra_headers) sr.headers.push_back({name, value});
    sr.payload_hash = payload_hash.empty() ? std::string(kEmptySha256) : payload_hash;
    SigV4Credentials keys = config_.credentials;
    if (config_.credential) {
      auto current = co_await config_.credential->AwaitGet();
      if (!current.ok()) co_return current.status().WithContext(root_);
      keys = std::move(current->keys);
    }
    auto sig = SignSigV4Headers(sr, keys, sigv4, static_cast<int64_t>(std::time(nullptr)));
    if (!sig.ok()) co_return sig.status().WithContext(root_ + ": signing");
    for (auto& h : sig->headers_to_add) req.headers.emplace_back(h.name, h.value);
  } else if (config_.auth == S3Auth::kBearer) {
    auto current = co_await config_.credential->AwaitGet();
    if (!current.ok()) co_return current.status().WithContext(root_);
    req.headers.emplace_back("authorization", "Bearer " + current->bearer);
  }
  co_return req;
}

std::string S3BucketKey(const S3StoreConfig& config) {
  std::string where = config.regional_aws_endpoint
                          ? std::string("aws")
                          : config.endpoint.host + ":" + std::to_string(config.endpoint.port);
  return where + "/" + config.bucket;
}

}  // namespace sluice

#include "stores/s3/s3_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/tree_listing.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_credential_chain.h"
#include "stores/s3/bucket_region.h"
#include "stores/common/xml_lite.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::vector<SigningQueryParam> NoQuery() { return {}; }

class S3Store final : public Store {
 public:
  S3Store(S3StoreConfig config, std::unique_ptr<HttpClient> client, StoreOptions options,
          std::shared_ptr<BucketRegion> region)
      : config_(std::move(config)), client_(std::move(client)), options_(std::move(options)),
        region_(std::move(region)) {
    root_ = config_.scheme + "://" + config_.bucket +
            (config_.prefix.empty() ? "" : "/" + config_.prefix);
  }

  std::string root() const override { return root_; }

  // Each operation runs once more when S3 answered that the bucket lives in
  // another region (the error taught region_ the right one; see
  // bucket_region.h): re-signed for it, as the AWS SDKs do.
  awaitable<Result<ObjectInfo>> Head(std::string key) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return HeadOnce(key); });
  }
  awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                          uint64_t length) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return GetRangeOnce(key, offset, length); });
  }
  awaitable<Result<std::string>> Get(std::string key) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return GetOnce(key); });
  }
  awaitable<Status> GetToFile(std::string key, std::string path,
                              std::optional<uint64_t> expected_size) override {
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetToFileOnce(key, path, expected_size); });
  }
  awaitable<Status> Put(std::string key, std::string bytes) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return PutOnce(key, bytes); });
  }
  awaitable<Status> PutFile(std::string key, std::string path) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return PutFileOnce(key, path); });
  }
  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return ListOnce(prefix); });
  }

  awaitable<Result<ObjectInfo>> HeadOnce(std::string key) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await Prepare(HttpMethod::kHead, FullKey(key), NoQuery(), ""));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root_, key));
    SLUICE_CO_ASSIGN_OR_RETURN(uint64_t size, SizeFromHead(resp, ObjectUrl(key)));
    co_return ObjectInfo{key, size};
  }

  awaitable<Result<std::string>> GetRangeOnce(std::string key, uint64_t offset,
                                          uint64_t length) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    if (length == 0) co_return std::string();
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await Prepare(HttpMethod::kGet, FullKey(key), NoQuery(), ""));
    req.range = ByteRange::FromTo(offset, offset + length - 1);
    auto resp = co_await client_->Send(std::move(req));
    co_return co_await BytesOfRangedGet(*this, std::move(key), offset, length, std::move(resp));
  }

  awaitable<Result<std::string>> GetOnce(std::string key) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await Prepare(HttpMethod::kGet, FullKey(key), NoQuery(), ""));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root_, key));
    co_return std::move(resp.body);
  }

  awaitable<Status> GetToFileOnce(std::string key, std::string path,
                              std::optional<uint64_t> expected_size) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await Prepare(HttpMethod::kGet, FullKey(key), NoQuery(), ""));
    GetToFileOptions opts;
    opts.part_size = std::max<uint64_t>(options_.part_size, 1);
    opts.concurrency = std::max(options_.concurrency, 1);
    opts.write_pool = options_.write_pool;
    opts.expected_size = expected_size;
    auto resp = co_await client_->GetToFile(req.url, path, opts, std::move(req.headers));
    if (!resp.ok()) co_return Context(resp.status(), key);
    co_return Status::Ok();
  }

  awaitable<Status> PutOnce(std::string key, std::string bytes) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req, co_await Prepare(HttpMethod::kPut, FullKey(key), NoQuery(), Sha256Hex(bytes)));
    req.body = std::move(bytes);
    co_return (co_await SendForObject(*client_, std::move(req), root_, key)).status();
  }

  // Multipart above part_size (S3 allows parts of 5 MiB to 5 GiB).
  awaitable<Status> PutFileOnce(std::string key, std::string path) {
    co_return co_await PutFileInParts(
        *this, std::move(key), std::move(path), options_.part_size,
        [this](std::string key, std::string path, uint64_t size, uint64_t part) {
          return Multipart(std::move(key), std::move(path), size, part);
        });
  }

  awaitable<Result<std::vector<ObjectInfo>>> ListOnce(std::string prefix) {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root_));
    co_return co_await ListTree(
        std::move(prefix), kConcurrentListings,
        MinKeysPerFolderToFanOut(options_.list_page_size > 0 ? options_.list_page_size : 1000),
        [this](const std::string& p, std::vector<ObjectInfo>* objects,
               std::vector<std::string>* sub_prefixes) {
          return ListSequence(p, objects, sub_prefixes);
        });
  }

  // Every page of one ListObjectsV2 sequence (see ListSequence in
  // stores/common/tree_listing.h).
  awaitable<Status> ListSequence(const std::string& prefix, std::vector<ObjectInfo>* objects,
                                 std::vector<std::string>* sub_prefixes) {
    std::string base = config_.prefix.empty() ? "" : config_.prefix + "/";
    std::string token;
    for (int page = 0;; ++page) {
      std::vector<SigningQueryParam> query;
      query.push_back({"list-type", "2"});
      if (!token.empty()) query.push_back({"continuation-token", token});
      if (sub_prefixes != nullptr) query.push_back({"delimiter", "/"});
      if (options_.list_page_size > 0) {
        query.push_back({"max-keys", std::to_string(options_.list_page_size)});
      }
      query.push_back({"prefix", base + prefix});
      SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                                 co_await Prepare(HttpMethod::kGet, "", std::move(query), ""));
      auto resp = co_await client_->Send(std::move(req));
      if (!resp.ok()) co_return Context(resp.status(), prefix);
      static constexpr XmlListingDialect kListObjectsV2{
          "list", "ListBucketResult", "", "Contents", "Key", "Size", "IsTruncated",
          "NextContinuationToken", "CommonPrefixes", "Prefix"};
      SLUICE_CO_ASSIGN_OR_RETURN(token, ReadXmlListingPage(kListObjectsV2, resp->body, page, token,
                                                           base, root_, objects, sub_prefixes));
      if (token.empty()) co_return Status::Ok();
    }
  }

 private:
  template <typename Op>
  auto OnceMoreIfRegionMoved(Op op) -> decltype(op()) {
    const uint64_t before = region_ ? region_->version() : 0;
    auto result = co_await op();
    if (result.ok() || !region_ || region_->version() == before) co_return result;
    co_return co_await op();
  }

  std::string FullKey(const std::string& key) const { return JoinKey(config_.prefix, key); }
  std::string ObjectUrl(const std::string& key) const { return JoinKey(root_, key); }

  Status Context(const Status& s, const std::string& key) const {
    return ObjectError(s, root_, key);
  }

  // The request for `object_key` ("" = the bucket), signed or authorized.
  awaitable<Result<HttpRequest>> Prepare(HttpMethod method, std::string object_key,
                                         std::vector<SigningQueryParam> query,
                                         std::string payload_hash) {
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
      auto sig = SignSigV4Headers(sr, keys, sigv4,
                                  static_cast<int64_t>(std::time(nullptr)));
      if (!sig.ok()) co_return sig.status().WithContext(root_ + ": signing");
      for (auto& h : sig->headers_to_add) req.headers.emplace_back(h.name, h.value);
    } else if (config_.auth == S3Auth::kBearer) {
      auto current = co_await config_.credential->AwaitGet();
      if (!current.ok()) co_return current.status().WithContext(root_);
      req.headers.emplace_back("authorization", "Bearer " + current->bearer);
    }
    co_return req;
  }

  awaitable<Status> Multipart(std::string key, std::string path, uint64_t size, uint64_t part) {
    std::string full = FullKey(key);
    std::vector<SigningQueryParam> init_query;
    init_query.push_back({"uploads", ""});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest init,
                               co_await Prepare(HttpMethod::kPost, full, std::move(init_query), ""));
    auto init_resp = co_await client_->Send(std::move(init));
    if (!init_resp.ok()) co_return Context(init_resp.status(), key);
    auto upload_id = XmlUnescape(XmlFirst(init_resp->body, "UploadId"));
    if (!upload_id.ok() || upload_id->empty()) {
      co_return CorruptError(ObjectUrl(key) + ": CreateMultipartUpload answered no UploadId");
    }
    Status status = co_await UploadParts(key, path, size, part, *upload_id);
    if (!status.ok()) {
      // Best effort: the upload's parts would otherwise be billed until a
      // lifecycle rule removes them.
      std::vector<SigningQueryParam> abort_query;
      abort_query.push_back({"uploadId", *upload_id});
      auto abort = co_await Prepare(HttpMethod::kDelete, full, std::move(abort_query), "");
      if (abort.ok()) (void)co_await client_->Send(std::move(abort).value());
    }
    co_return status;
  }

  // UploadPart `number` (from 1): bytes [offset, offset + length) of local
  // file `path`; its ETag into *etag.
  awaitable<Status> UploadPart(const std::string& key, const std::string& path, uint64_t offset,
                               uint64_t length, uint64_t number, const std::string& upload_id,
                               std::string* etag) {
    SLUICE_CO_ASSIGN_OR_RETURN(std::string bytes, ReadLocalFileRange(path, offset, length));
    std::vector<SigningQueryParam> part_query;
    part_query.push_back({"partNumber", std::to_string(number)});
    part_query.push_back({"uploadId", upload_id});
    std::string part_hash = Sha256Hex(bytes);
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await Prepare(HttpMethod::kPut, FullKey(key), std::move(part_query), std::move(part_hash)));
    req.body = std::move(bytes);
    auto resp = co_await client_->Send(std::move(req));
    if (!resp.ok()) {
      co_return Context(resp.status(), key).WithContext("part " + std::to_string(number));
    }
    *etag = resp->Header("etag");
    if (etag->empty()) {
      co_return CorruptError(ObjectUrl(key) + ": UploadPart " + std::to_string(number) +
                             " answered no ETag");
    }
    co_return Status::Ok();
  }

  awaitable<Status> UploadParts(const std::string& key, const std::string& path, uint64_t size,
                                uint64_t part, const std::string& upload_id) {
    std::string full = FullKey(key);
    uint64_t parts = (size + part - 1) / part;
    if (parts > 10000) {
      co_return InvalidArgumentError(ObjectUrl(key) + ": " + std::to_string(parts) +
                                     " parts of " + std::to_string(part) +
                                     " bytes exceed the 10000 a multipart upload allows");
    }
    // Parts go up concurrently; CompleteMultipartUpload lists them by number.
    std::vector<std::string> etags(parts);
    Status sent = co_await ForEachPartConcurrently(
        parts, options_.upload_concurrency, [&](uint64_t i) -> awaitable<Status> {
          return UploadPart(key, path, i * part, std::min(part, size - i * part), i + 1,
                            upload_id, &etags[i]);
        });
    if (!sent.ok()) co_return sent;
    std::string complete = "<CompleteMultipartUpload>";
    for (uint64_t i = 0; i < parts; ++i) {
      complete += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                  XmlEscape(etags[i]) + "</ETag></Part>";
    }
    complete += "</CompleteMultipartUpload>";
    std::vector<SigningQueryParam> done_query;
    done_query.push_back({"uploadId", upload_id});
    std::string done_hash = Sha256Hex(complete);
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest done,
        co_await Prepare(HttpMethod::kPost, full, std::move(done_query), std::move(done_hash)));
    done.body = std::move(complete);
    done.headers.emplace_back("content-type", "application/xml");
    auto resp = co_await client_->Send(std::move(done));
    if (!resp.ok()) co_return Context(resp.status(), key);
    // S3 may answer 200 and report the failure in the body.
    if (resp->body.find("<Error>") != std::string::npos) {
      co_return IoError(ObjectUrl(key) + ": CompleteMultipartUpload failed: " +
                        std::string(XmlFirst(resp->body, "Code")));
    }
    co_return Status::Ok();
  }

  S3StoreConfig config_;
  std::unique_ptr<HttpClient> client_;
  StoreOptions options_;
  std::shared_ptr<BucketRegion> region_;  // null: no region following (gs://, oci://)
  std::string root_;
};

Result<S3StoreConfig> BaseConfig(std::string_view url, std::string_view scheme) {
  S3StoreConfig config;
  config.scheme = std::string(scheme);
  // A query would become part of the key prefix and be echoed in every
  // error (it may be a presigned signature); Mosaic's urlparse drops it.
  if (url.find('?') != std::string_view::npos) {
    return InvalidArgumentError(UrlForErrors(url) + ": a " + std::string(scheme) +
                                ":// URL takes no query");
  }
  SLUICE_ASSIGN_OR_RETURN(BucketPath bp,
                          SplitBucketPath(url, url.substr(scheme.size() + 3)));
  config.bucket = bp.bucket;
  config.prefix = bp.path;
  return config;
}

Result<Url> ParseEndpoint(const std::string& value, const char* variable) {
  auto url = ParseUrl(value);
  if (!url.ok()) {
    return InvalidArgumentError(std::string(variable) + " is not an http(s) URL: " +
                                url.status().message());
  }
  return url;
}

// Credentials (or unsigned) and requester-pays for S3 and OCI.
Status ApplyAwsAuth(const AwsSettings& settings, const std::string& url, S3StoreConfig* config) {
  auto auth = ChooseRequestAuth({"S3_UNSIGNED", "AWS_NO_SIGN_REQUEST"},
                                AwsSharedCredential(settings));
  if (!auth.ok()) return auth.status().WithContext(url);
  if (auth->credential) {
    config->auth = S3Auth::kSigV4;
    config->credential = std::move(auth->credential);
  } else {
    config->auth = S3Auth::kNone;
    config->unsigned_reason = std::move(auth->unsigned_reason);
  }
  if (auto payers = GetEnv("MOSAICML_STREAMING_AWS_REQUESTER_PAYS")) {
    for (const std::string& b : SplitAny(*payers, ", \t")) {
      if (b == config->bucket) config->extra_headers.emplace_back("x-amz-request-payer", "requester");
    }
  }
  return Status::Ok();
}

// S3's error detail, plus, when S3 refused the signature or the key, which
// credential source signed (so the user knows which setting to fix).
// Also where a store learns its bucket's region from S3's errors.
std::function<std::string(std::string_view)> ErrorDetailFor(const S3StoreConfig& config,
                                                            std::shared_ptr<BucketRegion> region) {
  auto credential = config.auth == S3Auth::kSigV4 ? config.credential : nullptr;
  if (!credential && !region) return XmlErrorDetail;
  return [credential, region](std::string_view body) {
    std::string detail = XmlErrorDetail(body);
    if (region && region->LearnFromError(body)) {
      detail += "; the bucket is in " + region->region() + ", retrying there";
    }
    if (!credential) return detail;
    std::string_view code = XmlFirst(body, "Code");
    for (std::string_view refused : {"AccessDenied", "InvalidAccessKeyId",
                                     "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                                     "TokenRefreshRequired"}) {
      if (code != refused) continue;
      auto current = credential->Get();
      if (current.ok()) detail += "; signed with AWS credentials from " + current->source;
      break;
    }
    return detail;
  };
}

// Where a store learns its bucket's region from a bodiless answer (a HEAD's
// 301 names it only in x-amz-bucket-region).
std::function<std::string(const HttpHeaders&)> ErrorHeaderDetailFor(
    std::shared_ptr<BucketRegion> region) {
  if (!region) return nullptr;
  return [region](const HttpHeaders& headers) -> std::string {
    for (const auto& [name, value] : headers) {
      if (name == "x-amz-bucket-region" && region->LearnFromRegionHeader(value)) {
        return "the bucket is in " + region->region() + ", retrying there";
      }
    }
    return {};
  };
}

StoreOptions Sanitize(StoreOptions o) { return o; }

// The bucket at its endpoint, for the process-wide memory of bucket regions.
std::string BucketKey(const S3StoreConfig& config) {
  std::string where = config.regional_aws_endpoint
                          ? std::string("aws")
                          : config.endpoint.host + ":" + std::to_string(config.endpoint.port);
  return where + "/" + config.bucket;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenS3CompatibleStore(S3StoreConfig config,
                                                     boost::asio::any_io_executor executor,
                                                     const StoreOptions& options) {
  if (config.auth == S3Auth::kBearer && !config.credential) {
    return InvalidArgumentError("bearer authorization without a credential");
  }
  std::shared_ptr<BucketRegion> region;
  if (config.scheme == "s3" && config.auth != S3Auth::kBearer) {
    region = std::make_shared<BucketRegion>(BucketKey(config), config.sigv4.region);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options,
                                              ErrorDetailFor(config, region),
                                              ErrorHeaderDetailFor(region)));
  return std::unique_ptr<Store>(std::make_unique<S3Store>(std::move(config), std::move(client),
                                                          Sanitize(options), std::move(region)));
}

namespace {

// The configuration of s3://bucket[/prefix] from the environment (see s3_store.h).
Result<S3StoreConfig> S3ConfigFromEnvironment(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, BaseConfig(url, "s3"));
  auto loaded = LoadAwsSettings();
  if (!loaded.ok()) return loaded.status().WithContext(UrlForErrors(url));
  AwsSettings settings = std::move(*loaded);
  config.sigv4 = S3SigV4Config(settings.region);
  std::optional<std::string> endpoint;
  const char* endpoint_var = nullptr;
  for (const char* var : {"S3_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    if ((endpoint = GetEnv(var))) {
      endpoint_var = var;
      break;
    }
  }
  if (endpoint) {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint, ParseEndpoint(*endpoint, endpoint_var));
    config.path_style = true;
  } else {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint,
                            ParseUrl("https://s3." + settings.region + ".amazonaws.com"));
    config.path_style = config.bucket.find('.') != std::string::npos;
    config.regional_aws_endpoint = true;
  }
  // A region S3 named for this bucket earlier in this process wins.
  if (auto learned = LearnedBucketRegion(BucketKey(config))) config.sigv4.region = *learned;
  if (auto style = GetEnv("S3_ADDRESSING_STYLE")) {
    if (*style == "path") {
      config.path_style = true;
    } else if (*style == "virtual") {
      config.path_style = false;
    } else if (*style != "auto") {
      return InvalidArgumentError("S3_ADDRESSING_STYLE is '" + *style +
                                  "'; expected path, virtual or auto");
    }
  }
  SLUICE_RETURN_IF_ERROR(ApplyAwsAuth(settings, UrlForErrors(url), &config));
  return config;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenS3Store(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, S3ConfigFromEnvironment(url));
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

Result<std::string> DescribeS3Auth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, S3ConfigFromEnvironment(url));
  std::string out = config.scheme + "://" + config.bucket + "\n";
  out += "  region: " + config.sigv4.region + "\n";
  out += "  endpoint: " + config.endpoint.Redacted() + "\n";
  if (!config.credential) {
    out += "  requests: unsigned (" + config.unsigned_reason + ")\n";
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(Credential current, config.credential->Get());
  const std::string& id = current.keys.access_key_id;
  // Only the key id's last 4 characters, as `aws configure list` shows it.
  std::string masked = id.size() > 4 ? "****" + id.substr(id.size() - 4) : "****";
  out += "  credentials: " + current.source + " (access key " + masked +
         (current.keys.session_token.empty() ? "" : ", with a session token") + ")\n";
  if (current.expires_at) {
    out += "  expires: " + std::to_string(*current.expires_at) + " (unix time)\n";
  }
  out += "  sources tried: " + config.credential->DescribeAttempts() + "\n";
  return out;
}

Result<std::unique_ptr<Store>> OpenOciStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, BaseConfig(url, "oci"));
  auto loaded = LoadAwsSettings();
  if (!loaded.ok()) return loaded.status().WithContext(UrlForErrors(url));
  AwsSettings settings = std::move(*loaded);
  auto region = GetEnv("OCI_REGION");
  if (!region) {
    return InvalidArgumentError("oci:// needs OCI_REGION (e.g. us-ashburn-1) for " +
                                UrlForErrors(url));
  }
  config.sigv4 = S3SigV4Config(*region);
  if (auto endpoint = GetEnv("OCI_ENDPOINT_URL")) {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint, ParseEndpoint(*endpoint, "OCI_ENDPOINT_URL"));
  } else {
    auto ns = GetEnv("OCI_NAMESPACE");
    if (!ns) {
      return InvalidArgumentError(
          "oci:// needs OCI_NAMESPACE (the tenancy's object storage namespace) for " +
          UrlForErrors(url));
    }
    auto ep = ParseUrl("https://" + *ns + ".compat.objectstorage." + *region +
                       ".oraclecloud.com");
    if (!ep.ok()) {
      return InvalidArgumentError("OCI_NAMESPACE or OCI_REGION does not make a valid host name");
    }
    config.endpoint = *ep;
  }
  config.path_style = true;
  SLUICE_RETURN_IF_ERROR(ApplyAwsAuth(settings, UrlForErrors(url), &config));
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

}  // namespace sluice

#include "stores/s3/s3_store.h"

#include "base/asio/co_status.h"
#include "stores/common/object_http.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/common/tree_listing.h"
#include "stores/common/xml_lite.h"
#include "stores/s3/bucket_region.h"
#include "stores/s3/s3_listing.h"
#include "stores/s3/s3_multipart.h"
#include "stores/s3/s3_requests.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

// The store's operations; how a request is addressed and signed is
// S3Requests', listing's and multipart upload's are in their own files.
class S3Store final : public Store {
 public:
  S3Store(S3StoreConfig config, std::unique_ptr<HttpClient> client, StoreOptions options,
          std::shared_ptr<BucketRegion> region)
      : requests_(std::move(config), std::move(region)), client_(std::move(client)),
        options_(std::move(options)) {}

  std::string root() const override { return requests_.root(); }

  // Each operation runs once more when S3 answered that the bucket lives in
  // another region (the error taught the BucketRegion the right one; see
  // bucket_region.h): re-signed for it, as the AWS SDKs do.
  awaitable<Result<ObjectInfo>> Head(std::string key) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return HeadOnce(key); });
  }
  awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                          uint64_t length) override {
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetRangeOnce(key, offset, length, WholeObjectAnswer::kCutToRange); });
  }
  awaitable<Result<std::string>> GetRangeOnly(std::string key, uint64_t offset,
                                              uint64_t length) override {
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetRangeOnce(key, offset, length, WholeObjectAnswer::kRefuse); });
  }
  awaitable<Result<std::string>> GetRangeOnlyOfVersion(std::string key, uint64_t offset,
                                                       uint64_t length,
                                                       ObjectVersion version) override {
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetRangeOnce(key, offset, length, WholeObjectAnswer::kRefuse, version); });
  }
  awaitable<Result<uint64_t>> GetRangeOnlyInto(std::string key, uint64_t offset, uint64_t length,
                                               ObjectVersion version, char* into,
                                               IntoProgress* progress = nullptr) override {
    // A region's redirect is an answer without a body: nothing was reported.
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetRangeIntoOnce(key, offset, length, version, into, progress); });
  }
  RangedPartsClaim ClaimRangedParts(uint64_t length, uint64_t part_size) override {
    return RangedPartsFor(*client_, options_, length, part_size);
  }
  awaitable<Result<std::string>> Get(std::string key) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return GetOnce(key); });
  }
  awaitable<Status> GetToFile(std::string key, std::string path,
                              std::optional<uint64_t> expected_size) override {
    co_return co_await OnceMoreIfRegionMoved(
        [&] { return GetToFileOnce(key, path, expected_size, nullptr); });
  }
  awaitable<Status> GetToFileFilling(std::string key, std::string path,
                                     std::optional<uint64_t> expected_size,
                                     FillWatermark* fill) override {
    bool tried = false;
    co_return co_await OnceMoreIfRegionMoved([&] {
      // A second try writes the file again from its start.
      if (fill != nullptr && tried) fill->Abandon();
      tried = true;
      return GetToFileOnce(key, path, expected_size, fill);
    });
  }
  bool ReportsFills() const override { return true; }
  awaitable<Status> Put(std::string key, std::string bytes) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return PutOnce(key, bytes); });
  }
  awaitable<Status> PutFile(std::string key, std::string path) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return PutFileOnce(key, path); });
  }
  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    co_return co_await OnceMoreIfRegionMoved([&] { return ListOnce(prefix); });
  }

 private:
  template <typename Op>
  auto OnceMoreIfRegionMoved(Op op) -> decltype(op()) {
    BucketRegion* region = requests_.region();
    const uint64_t before = region ? region->version() : 0;
    auto result = co_await op();
    if (result.ok() || !region || region->version() == before) co_return result;
    co_return co_await op();
  }

  awaitable<Result<ObjectInfo>> HeadOnce(std::string key) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await requests_.Prepare(HttpMethod::kHead, requests_.FullKey(key), NoQuery(), ""));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root(), key));
    SLUICE_CO_ASSIGN_OR_RETURN(uint64_t size, SizeFromHead(resp, requests_.ObjectUrl(key)));
    co_return ObjectInfo{key, size, resp.Header("etag")};
  }

  awaitable<Result<std::string>> GetRangeOnce(std::string key, uint64_t offset, uint64_t length,
                                              WholeObjectAnswer whole,
                                              ObjectVersion version = {}) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    if (length == 0) co_return std::string();
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await requests_.Prepare(HttpMethod::kGet, requests_.FullKey(key), NoQuery(), ""));
    // If-Match goes unsigned (SigV4 signs only the headers it names).
    co_return co_await SendRangedGet(*client_, *this, std::move(key), offset, length,
                                     std::move(req), whole, std::move(version));
  }

  // GetRangeOnce's kRefuse, received into `into` (Store::GetRangeOnlyInto):
  // each part signed on its own, as any request.
  awaitable<Result<uint64_t>> GetRangeIntoOnce(std::string key, uint64_t offset, uint64_t length,
                                               ObjectVersion version, char* into,
                                               IntoProgress* progress) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    if (length == 0) co_return uint64_t{0};
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await requests_.Prepare(HttpMethod::kGet, requests_.FullKey(key), NoQuery(), ""));
    co_return co_await SendRangedGetInto(*client_, *this, std::move(key), offset, length, into,
                                         std::move(req), std::move(version), progress);
  }

  awaitable<Result<std::string>> GetOnce(std::string key) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await requests_.Prepare(HttpMethod::kGet, requests_.FullKey(key), NoQuery(), ""));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root(), key));
    co_return std::move(resp.body);
  }

  awaitable<Status> GetToFileOnce(std::string key, std::string path,
                                  std::optional<uint64_t> expected_size, FillWatermark* fill) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    SLUICE_CO_ASSIGN_OR_RETURN(
        HttpRequest req,
        co_await requests_.Prepare(HttpMethod::kGet, requests_.FullKey(key), NoQuery(), ""));
    GetToFileOptions download = DownloadOptions(options_, expected_size);
    download.fill = fill;
    auto resp = co_await client_->GetToFile(req.url, path, std::move(download),
                                            std::move(req.headers));
    if (!resp.ok()) co_return requests_.Context(resp.status(), key);
    co_return Status::Ok();
  }

  awaitable<Status> PutOnce(std::string key, std::string bytes) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await requests_.Prepare(HttpMethod::kPut, requests_.FullKey(key),
                                                          NoQuery(), Sha256Hex(bytes)));
    req.body = std::move(bytes);
    co_return (co_await SendForObject(*client_, std::move(req), root(), key)).status();
  }

  // Multipart above part_size (S3 allows parts of 5 MiB to 5 GiB).
  awaitable<Status> PutFileOnce(std::string key, std::string path) {
    co_return co_await PutFileInParts(
        *this, std::move(key), std::move(path), options_.part_size,
        [this](std::string key, std::string path, uint64_t size, uint64_t part) {
          return PutFileMultipart(requests_, *client_, options_.upload_concurrency,
                                  std::move(key), std::move(path), size, part);
        });
  }

  awaitable<Result<std::vector<ObjectInfo>>> ListOnce(std::string prefix) {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root()));
    co_return co_await ListTree(
        std::move(prefix), kConcurrentListings,
        MinKeysPerFolderToFanOut(options_.list_page_size > 0 ? options_.list_page_size : 1000),
        [this](const std::string& p, std::vector<ObjectInfo>* objects,
               std::vector<std::string>* sub_prefixes) {
          return ListObjectsV2Sequence(requests_, *client_, options_.list_page_size, p, objects,
                                       sub_prefixes);
        });
  }

  S3Requests requests_;
  std::unique_ptr<HttpClient> client_;
  StoreOptions options_;
};

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

}  // namespace

Result<std::unique_ptr<Store>> OpenS3CompatibleStore(S3StoreConfig config,
                                                     boost::asio::any_io_executor executor,
                                                     const StoreOptions& options) {
  if (config.auth == S3Auth::kBearer && !config.credential) {
    return InvalidArgumentError("bearer authorization without a credential");
  }
  std::shared_ptr<BucketRegion> region;
  if (config.scheme == "s3" && config.auth != S3Auth::kBearer) {
    region = std::make_shared<BucketRegion>(S3BucketKey(config), config.sigv4.region);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options,
                                              ErrorDetailFor(config, region),
                                              ErrorHeaderDetailFor(region)));
  return std::unique_ptr<Store>(std::make_unique<S3Store>(std::move(config), std::move(client),
                                                          options, std::move(region)));
}

}  // namespace sluice

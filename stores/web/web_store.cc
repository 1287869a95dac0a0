#include "stores/web/web_store.h"

#include "base/asio/co_status.h"
#include "stores/common/object_http.h"
#include "stores/common/store_keys.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

class WebStore final : public BearerHttpStore {
 public:
  WebStore(std::string root, std::string base, std::string query, std::string bearer,
           std::unique_ptr<HttpClient> client, StoreOptions options)
      : BearerHttpStore(std::move(root), std::move(bearer), std::move(client), std::move(options)),
        base_(std::move(base)),
        query_(std::move(query)) {}

 protected:
  std::string ObjectUrl(const std::string& key) const override {
    return base_ + "/" + EncodeUriPath(key) + query_;
  }

 private:
  std::string base_;   // scheme://authority/path, no trailing '/'
  std::string query_;  // "" or "?..."
};

}  // namespace

BearerHttpStore::BearerHttpStore(std::string root, std::string bearer,
                                 std::unique_ptr<HttpClient> client, StoreOptions options)
    : root_(std::move(root)),
      bearer_(std::move(bearer)),
      client_(std::move(client)),
      options_(std::move(options)) {}

BearerHttpStore::BearerHttpStore(std::string root, std::shared_ptr<SharedCredential> credential,
                                 std::unique_ptr<HttpClient> client, StoreOptions options)
    : root_(std::move(root)),
      credential_(std::move(credential)),
      client_(std::move(client)),
      options_(std::move(options)) {}

BearerHttpStore::~BearerHttpStore() = default;

awaitable<Result<HttpHeaders>> BearerHttpStore::AuthHeaders() {
  HttpHeaders h;
  std::string bearer = bearer_;
  if (credential_) {
    auto current = co_await credential_->AwaitGet();
    if (!current.ok()) co_return current.status().WithContext(root_);
    bearer = std::move(current->bearer);
    h = std::move(current->headers);
  }
  if (!bearer.empty()) h.emplace(h.begin(), "authorization", "Bearer " + bearer);
  co_return h;
}

Status BearerHttpStore::Context(const Status& s, const std::string& key) const {
  return ObjectError(s, root_, key);
}

awaitable<Result<HttpHeaders>> BearerHttpStore::RequestHeaders(HttpMethod, const std::string&) {
  co_return co_await AuthHeaders();
}

awaitable<Result<ObjectInfo>> BearerHttpStore::Head(std::string key) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  HttpRequest req;
  req.method = HttpMethod::kHead;
  req.url = ObjectUrl(key);
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
  SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                             co_await SendForObject(*client_, std::move(req), root_, key));
  SLUICE_CO_ASSIGN_OR_RETURN(uint64_t size, SizeFromHead(resp, JoinKey(root_, key)));
  co_return ObjectInfo{key, size};
}

awaitable<Result<std::string>> BearerHttpStore::GetRange(std::string key, uint64_t offset,
                                                         uint64_t length) {
  co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kCutToRange);
}

awaitable<Result<std::string>> BearerHttpStore::GetRangeOnly(std::string key, uint64_t offset,
                                                             uint64_t length) {
  co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kRefuse);
}

awaitable<Result<std::string>> BearerHttpStore::GetRangeOnlyOfVersion(std::string key,
                                                                      uint64_t offset,
                                                                      uint64_t length,
                                                                      ObjectVersion version) {
  version.etag.clear();  // any version: no If-Match
  co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kRefuse,
                            std::move(version));
}

awaitable<Result<uint64_t>> BearerHttpStore::GetRangeOnlyInto(std::string key, uint64_t offset,
                                                              uint64_t length,
                                                              ObjectVersion version,
                                                              char* into,
                                                              IntoProgress* progress) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  if (length == 0) co_return uint64_t{0};
  HttpRequest req;
  req.url = ObjectUrl(key);
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
  // Any version, as GetRangeOnlyOfVersion here: no If-Match; the size
  // checked when given.
  version.etag.clear();
  co_return co_await SendRangedGetInto(*client_, *this, std::move(key), offset, length, into,
                                       std::move(req), std::move(version), progress);
}

RangedPartsClaim BearerHttpStore::ClaimRangedParts(uint64_t length, uint64_t part_size) {
  return RangedPartsFor(*client_, options_, length, part_size);
}

awaitable<Result<std::string>> BearerHttpStore::Ranged(std::string key, uint64_t offset,
                                                       uint64_t length, WholeObjectAnswer whole,
                                                       ObjectVersion version) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  HttpRequest req;
  req.url = ObjectUrl(key);
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
  co_return co_await SendRangedGet(*client_, *this, std::move(key), offset, length,
                                   std::move(req), whole, std::move(version));
}

awaitable<Result<std::string>> BearerHttpStore::Get(std::string key) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  HttpRequest req;
  req.url = ObjectUrl(key);
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
  SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                             co_await SendForObject(*client_, std::move(req), root_, key));
  co_return std::move(resp.body);
}

awaitable<Status> BearerHttpStore::GetToFile(std::string key, std::string path,
                                             std::optional<uint64_t> expected_size) {
  co_return co_await GetToFileFilling(std::move(key), std::move(path), expected_size, nullptr);
}

awaitable<Status> BearerHttpStore::GetToFileFilling(std::string key, std::string path,
                                                    std::optional<uint64_t> expected_size,
                                                    FillWatermark* fill) {
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  const std::string url = ObjectUrl(key);
  SLUICE_CO_ASSIGN_OR_RETURN(HttpHeaders auth, co_await RequestHeaders(HttpMethod::kGet, url));
  GetToFileOptions download = DownloadOptions(options_, expected_size);
  download.fill = fill;
  auto resp = co_await client_->GetToFile(url, path, std::move(download), std::move(auth));
  if (!resp.ok()) co_return Context(resp.status(), key);
  co_return Status::Ok();
}

awaitable<Status> BearerHttpStore::Upload(std::string key, std::string bytes,
                                          std::optional<std::string> path) {
  if (!Writable()) co_return UnimplementedError(JoinKey(root_, key) + ": " + root_ + " is read-only");
  SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
  HttpRequest req;
  req.method = HttpMethod::kPut;
  req.url = ObjectUrl(key) + UploadQuery();
  SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
  req.headers.emplace_back("content-type", "application/octet-stream");
  if (path) {
    req.body_file = std::move(*path);
  } else {
    req.body = std::move(bytes);
  }
  co_return (co_await SendForObject(client(), std::move(req), root_, key)).status();
}

awaitable<Status> BearerHttpStore::PutFile(std::string key, std::string path) {
  co_return co_await Upload(std::move(key), "", std::move(path));
}

awaitable<Status> BearerHttpStore::Put(std::string key, std::string bytes) {
  co_return co_await Upload(std::move(key), std::move(bytes), std::nullopt);
}

awaitable<Result<std::vector<ObjectInfo>>> BearerHttpStore::List(std::string) {
  co_return UnimplementedError(root_ + ": HTTP(S) stores cannot list objects");
}

Result<std::unique_ptr<Store>> OpenWebStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
  std::string target = parsed.target;
  std::string query;
  size_t q = target.find('?');
  if (q != std::string::npos) {
    query = target.substr(q);
    target.resize(q);
  }
  while (!target.empty() && target.back() == '/') target.pop_back();
  std::string base = parsed.scheme + "://" + parsed.Authority() + target;
  std::string root = parsed.scheme + "://" + parsed.Authority() + target;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options,
                                              XmlErrorDetail));
  return std::unique_ptr<Store>(std::make_unique<WebStore>(
      std::move(root), std::move(base), std::move(query),
      GetEnv("SLUICE_HTTP_BEARER_TOKEN").value_or(""), std::move(client), options));
}

}  // namespace sluice

#include "stores/azure/azure_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "base/fill_watermark.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/tree_listing.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/http/http_client.h"
#include "stores/common/xml_lite.h"
#include "stores/credentials/anonymous_access.h"
#include "stores/credentials/azure_credential.h"
#include "stores/http/url.h"
#include "stores/signing/azure_shared_key.h"
#include "stores/signing/digest.h"
#include "stores/signing/signing_time.h"
#include "stores/signing/sigv4.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

constexpr char kApiVersion[] = "2021-12-02";

struct AzureConfig {
  std::string scheme;     // "azure" or "azure-dl"
  std::string container;
  std::string prefix;     // root inside the container, no '/' at the ends
  std::string endpoint;   // "https://acct.blob.core.windows.net", no trailing '/'
  std::string account;
  // Asked per request (AwaitGet: bearer tokens refresh off the event
  // loop); first fetched at open. Null: anonymous requests.
  std::shared_ptr<SharedCredential> credential;
};

// Block ids must all have the same length: base64 of "blk" + 8 digits.
std::string BlockId(uint64_t i) {
  std::string digits = std::to_string(i);
  return Base64Encode("blk" + std::string(digits.size() < 8 ? 8 - digits.size() : 0, '0') + digits);
}

class AzureStore final : public Store {
 public:
  AzureStore(AzureConfig config, std::unique_ptr<HttpClient> client, StoreOptions options)
      : config_(std::move(config)), client_(std::move(client)), options_(std::move(options)) {
    root_ = config_.scheme + "://" + config_.container +
            (config_.prefix.empty() ? "" : "/" + config_.prefix);
  }

  std::string root() const override { return root_; }

  awaitable<Result<ObjectInfo>> Head(std::string key) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kHead, FullKey(key), NoQuery(), NoHeaders(), 0));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root_, key));
    SLUICE_CO_ASSIGN_OR_RETURN(uint64_t size, SizeFromHead(resp, ObjectUrl(key)));
    co_return ObjectInfo{key, size, resp.Header("etag")};
  }

  awaitable<Result<std::string>> GetRange(std::string key, uint64_t offset,
                                          uint64_t length) override {
    co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kCutToRange);
  }

  awaitable<Result<std::string>> GetRangeOnly(std::string key, uint64_t offset,
                                              uint64_t length) override {
    co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kRefuse);
  }

  awaitable<Result<std::string>> GetRangeOnlyOfVersion(std::string key, uint64_t offset,
                                                       uint64_t length,
                                                       ObjectVersion version) override {
    co_return co_await Ranged(std::move(key), offset, length, WholeObjectAnswer::kRefuse,
                              std::move(version));
  }

  awaitable<Result<uint64_t>> GetRangeOnlyInto(std::string key, uint64_t offset, uint64_t length,
                                               ObjectVersion version, char* into,
                                               IntoProgress* progress = nullptr) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    if (length == 0) co_return uint64_t{0};
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await PrepareRanged(key, offset, length, version.etag));
    co_return co_await SendRangedGetInto(*client_, *this, std::move(key), offset, length, into,
                                         std::move(req), std::move(version), progress);
  }

  RangedPartsClaim ClaimRangedParts(uint64_t length, uint64_t part_size) override {
    return RangedPartsFor(*client_, options_, length, part_size);
  }

  awaitable<Result<std::string>> Get(std::string key) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kGet, FullKey(key), NoQuery(), NoHeaders(), 0));
    SLUICE_CO_ASSIGN_OR_RETURN(HttpResponse resp,
                               co_await SendForObject(*client_, std::move(req), root_, key));
    co_return std::move(resp.body);
  }

  // Ranged parts, `concurrency` at a time (each signed: SharedKey covers
  // the range), written into a temporary file renamed into place when whole.
  awaitable<Status> GetToFile(std::string key, std::string path,
                              std::optional<uint64_t> expected_size) override {
    co_return co_await GetToFileFilling(std::move(key), std::move(path), expected_size, nullptr);
  }
  // The same, telling `fill` of the temporary and of each part once
  // written (whole parts: the fill moves a part at a time). A part asked
  // again rewrites its own range only, so nothing told is ever taken back.
  awaitable<Status> GetToFileFilling(std::string key, std::string path,
                                     std::optional<uint64_t> expected_size,
                                     FillWatermark* fill) override {
    SLUICE_CO_ASSIGN_OR_RETURN(ObjectInfo info, co_await Head(key));
    if (expected_size && info.size != *expected_size) {
      co_return ObjectSizeChangedError(ObjectUrl(key), info.size, *expected_size);
    }
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      SLUICE_CO_RETURN_IF_ERROR(MakeDirs(path.substr(0, slash), options_.env));
    }
    SLUICE_CO_ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(path, options_.env));
    if (fill != nullptr) fill->Attach(tmp.path());
    uint64_t part = std::max<uint64_t>(options_.part_size, 1);
    Status status = co_await ForEachPartConcurrently(
        (info.size + part - 1) / part, options_.concurrency, [&](uint64_t i) {
          return GetPartInto(tmp.env(), tmp.fd(), tmp.path(), key, i * part,
                             std::min(part, info.size - i * part), fill);
        });
    if (!status.ok()) co_return status;  // the TempFile deletes itself
    co_return tmp.Commit();
  }

  bool ReportsFills() const override { return true; }

  // Bytes [offset, offset + n) of blob `key` written at `offset` of `fd`
  // (the temporary file `tmp`), then told to `fill` (may be null).
  awaitable<Status> GetPartInto(Env* env, int fd, const std::string& tmp, const std::string& key,
                                uint64_t offset, uint64_t n, FillWatermark* fill) {
    SLUICE_CO_ASSIGN_OR_RETURN(std::string bytes, co_await GetRange(key, offset, n));
    if (bytes.size() != n) {
      co_return CorruptError(ObjectUrl(key) + ": blob shrank while downloading (got " +
                             std::to_string(bytes.size()) + " of " + std::to_string(n) +
                             " bytes at offset " + std::to_string(offset) + ")");
    }
    SLUICE_CO_RETURN_IF_ERROR(env->PWriteAll(fd, tmp, bytes, offset));
    if (fill != nullptr) fill->Wrote(offset, n);
    co_return Status::Ok();
  }

  awaitable<Status> Put(std::string key, std::string bytes) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    std::vector<SigningHeader> extra;
    extra.push_back({"content-type", "application/octet-stream"});
    extra.push_back({"x-ms-blob-type", "BlockBlob"});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kPut, FullKey(key), NoQuery(), extra, bytes.size()));
    req.body = std::move(bytes);
    co_return (co_await SendForObject(*client_, std::move(req), root_, key)).status();
  }

  // Put Block List of blocks above part_size.
  awaitable<Status> PutFile(std::string key, std::string path) override {
    co_return co_await PutFileInParts(
        *this, std::move(key), std::move(path), options_.part_size,
        [this](std::string key, std::string path, uint64_t size, uint64_t part) {
          return PutBlocks(std::move(key), std::move(path), size, part);
        });
  }

  // Put Block `index`: bytes [offset, offset + length) of local file `path`.
  awaitable<Status> PutBlock(const std::string& key, const std::string& path, uint64_t offset,
                             uint64_t length, uint64_t index) {
    SLUICE_CO_ASSIGN_OR_RETURN(std::string chunk, ReadLocalFileRange(path, offset, length));
    std::vector<SigningHeader> extra;
    extra.push_back({"content-type", "application/octet-stream"});
    std::vector<SigningQueryParam> block_query;
    block_query.push_back({"comp", "block"});
    block_query.push_back({"blockid", BlockId(index)});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kPut, FullKey(key),
                                                        std::move(block_query), extra, chunk.size()));
    req.body = std::move(chunk);
    auto resp = co_await client_->Send(std::move(req));
    if (!resp.ok()) {
      co_return Context(resp.status(), key).WithContext("Put Block " + std::to_string(index));
    }
    co_return Status::Ok();
  }

  // Put Block for each part of local file `path` (concurrently), then Put
  // Block List naming them in order.
  awaitable<Status> PutBlocks(std::string key, std::string path, uint64_t size, uint64_t part) {
    uint64_t blocks = (size + part - 1) / part;
    if (blocks > 50000) {
      co_return InvalidArgumentError(ObjectUrl(key) + ": " + std::to_string(blocks) +
                                     " blocks exceed the 50000 a blob allows");
    }
    Status sent = co_await ForEachPartConcurrently(
        blocks, options_.upload_concurrency, [&](uint64_t i) -> awaitable<Status> {
          return PutBlock(key, path, i * part, std::min(part, size - i * part), i);
        });
    if (!sent.ok()) co_return sent;
    std::string list = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
    for (uint64_t i = 0; i < blocks; ++i) list += "<Latest>" + BlockId(i) + "</Latest>";
    list += "</BlockList>";
    std::vector<SigningHeader> extra;
    extra.push_back({"content-type", "application/xml"});
    std::vector<SigningQueryParam> list_query;
    list_query.push_back({"comp", "blocklist"});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kPut, FullKey(key),
                                                        std::move(list_query), extra, list.size()));
    req.body = std::move(list);
    co_return (co_await SendForObject(*client_, std::move(req), root_, key)).status();
  }

  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root_));
    co_return co_await ListTree(
        std::move(prefix), kConcurrentListings,
        MinKeysPerFolderToFanOut(options_.list_page_size > 0 ? options_.list_page_size : 5000),
        [this](const std::string& p, std::vector<ObjectInfo>* objects,
               std::vector<std::string>* sub_prefixes) {
          return ListSequence(p, objects, sub_prefixes);
        });
  }

  // Every page of one List Blobs sequence (see ListSequence in
  // stores/common/tree_listing.h).
  awaitable<Status> ListSequence(const std::string& prefix, std::vector<ObjectInfo>* objects,
                                 std::vector<std::string>* sub_prefixes) {
    std::string base = config_.prefix.empty() ? "" : config_.prefix + "/";
    std::string marker;
    for (int page = 0;; ++page) {
      std::vector<SigningQueryParam> query;
      query.push_back({"restype", "container"});
      query.push_back({"comp", "list"});
      query.push_back({"prefix", base + prefix});
      if (sub_prefixes != nullptr) query.push_back({"delimiter", "/"});
      if (!marker.empty()) query.push_back({"marker", marker});
      if (options_.list_page_size > 0) {
        query.push_back({"maxresults", std::to_string(options_.list_page_size)});
      }
      SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req, co_await Prepare(HttpMethod::kGet, "", query, NoHeaders(), 0));
      auto resp = co_await client_->Send(std::move(req));
      if (!resp.ok()) co_return Context(resp.status(), prefix);
      SLUICE_CO_ASSIGN_OR_RETURN(marker, ReadXmlListingPage(kListBlobsDialect, resp->body, page, marker,
                                                            base, root_, objects, sub_prefixes));
      if (marker.empty()) co_return Status::Ok();
    }
  }

 private:
  std::string FullKey(const std::string& key) const { return JoinKey(config_.prefix, key); }
  std::string ObjectUrl(const std::string& key) const { return JoinKey(root_, key); }
  Status Context(const Status& s, const std::string& key) const {
    return ObjectError(s, root_, key);
  }

  // The request for blob `blob` ("" = the container), signed with SharedKey
  // or carrying the SAS token. `extra` headers are sent and signed;
  // `body_size` is signed as Content-Length (the client sends that header).
  // The range goes in the standard Range header, which SharedKey signs and
  // the client sends from HttpRequest::range (SendRangedGet), so that the
  // client knows the request is ranged: it cuts a 200 (the whole object)
  // to the range, or refuses it. (x-ms-range, which the client cannot
  // see, left a 200's first bytes as the range's.) A body cut short is
  // asked again with the same, signed, range (HttpRequest::range_signed).
  // With an `etag` (GetRangeOnlyOfVersion), If-Match is sent and signed
  // (SharedKey's string-to-sign has its line), quoted as Azure's ETag
  // header is (its listing gives the Etag bare).
  awaitable<Result<std::string>> Ranged(std::string key, uint64_t offset, uint64_t length,
                                        WholeObjectAnswer whole, ObjectVersion version = {}) {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root_));
    if (length == 0) co_return std::string();
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await PrepareRanged(key, offset, length, version.etag));
    co_return co_await SendRangedGet(*client_, *this, std::move(key), offset, length,
                                     std::move(req), whole, std::move(version));
  }

  // The signed GET of bytes [offset, offset + length) of `key` (length >
  // 0); `etag` comes back quoted, as the request's If-Match has it.
  awaitable<Result<HttpRequest>> PrepareRanged(std::string key, uint64_t offset, uint64_t length,
                                               std::string& etag) {
    std::vector<SigningHeader> signed_headers{
        {"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1)}};
    if (!etag.empty() && etag.front() != '"') etag = '"' + etag + '"';
    if (!etag.empty()) signed_headers.push_back({"If-Match", etag});
    SLUICE_CO_ASSIGN_OR_RETURN(HttpRequest req,
                               co_await Prepare(HttpMethod::kGet, FullKey(key), NoQuery(), signed_headers, 0));
    std::erase_if(req.headers, [](const auto& h) { return h.first == "Range"; });
    req.range_signed = true;  // a retry resends this range, not the rest of it
    co_return req;
  }

  // Parameters by value: the coroutine may outlive its caller's temporaries.
  awaitable<Result<HttpRequest>> Prepare(HttpMethod method, std::string blob,
                                         std::vector<SigningQueryParam> query,
                                         std::vector<SigningHeader> extra, uint64_t body_size) {
    auto ep = ParseUrl(config_.endpoint);
    if (!ep.ok()) co_return ep.status();
    std::string base_path = ep->target == "/" ? "" : ep->target;
    while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
    std::string path = base_path + "/" + EncodeUriPath(config_.container);
    if (!blob.empty()) path += "/" + EncodeUriPath(blob);
    std::string query_text = EncodeQueryString(query);
    HttpRequest req;
    req.method = method;
    for (const auto& h : extra) req.headers.emplace_back(h.name, h.value);
    req.headers.emplace_back("x-ms-version", kApiVersion);
    std::string date = FormatHttpDate(static_cast<int64_t>(std::time(nullptr)));
    req.headers.emplace_back("x-ms-date", date);
    if (config_.credential) {
      // A bearer token's refresh runs on the refresher thread, never here.
      auto credential = co_await config_.credential->AwaitGet();
      if (!credential.ok()) co_return credential.status().WithContext(root_);
      if (!credential->account_key.empty()) {
        SigningRequest sr;
        sr.method = HttpMethodName(method);
        sr.path = path;
        sr.query = std::move(query);
        for (const auto& [name, value] : req.headers) sr.headers.push_back({name, value});
        if (method == HttpMethod::kPut || method == HttpMethod::kPost) {
          sr.headers.push_back({"Content-Length", std::to_string(body_size)});
        }
        auto sig = SignAzureSharedKey(sr, config_.account, credential->account_key);
        if (!sig.ok()) co_return sig.status().WithContext(root_);
        req.headers.emplace_back("authorization", sig->authorization);
      } else if (!credential->sas_token.empty()) {
        query_text += (query_text.empty() ? "" : "&") + credential->sas_token;
      } else if (!credential->bearer.empty()) {
        req.headers.emplace_back("authorization", "Bearer " + credential->bearer);
      }
    }
    req.url = ep->scheme + "://" + ep->Authority() + path + (query_text.empty() ? "" : "?" + query_text);
    co_return req;
  }

  AzureConfig config_;
  std::unique_ptr<HttpClient> client_;
  StoreOptions options_;
  std::string root_;
};

}  // namespace

namespace {

// The store's settings and how it authorizes requests (credential null:
// anonymous, for public containers, when no source applies).
struct AzureOpenState {
  AzureConfig config;
  std::string unsigned_reason;
};

Result<AzureOpenState> AzureStateFromEnvironment(std::string_view url) {
  AzureOpenState state;
  AzureConfig& config = state.config;
  config.scheme = std::string(url.substr(0, url.find(':')));
  SLUICE_ASSIGN_OR_RETURN(BucketPath bp,
                          SplitBucketPath(url, url.substr(config.scheme.size() + 3)));
  config.container = bp.bucket;
  config.prefix = bp.path;
  SLUICE_ASSIGN_OR_RETURN(AzureSettings settings, ReadAzureSettings(url));
  config.account = settings.account;
  config.endpoint = settings.endpoint;
  auto ep = ParseUrl(config.endpoint);
  if (!ep.ok()) {
    return InvalidArgumentError("the Azure blob endpoint is not an http(s) URL: " +
                                ep.status().message());
  }
  if (ep->target.find('?') != std::string::npos) {
    return InvalidArgumentError("the Azure blob endpoint must not hold a query");
  }
  auto auth = ChooseRequestAuth({}, AzureSharedCredential(settings));
  if (!auth.ok()) return auth.status().WithContext(UrlForErrors(url));
  config.credential = std::move(auth->credential);
  state.unsigned_reason = std::move(auth->unsigned_reason);
  if (config.credential) {
    auto current = config.credential->Get();
    if (!current.ok()) return current.status().WithContext(UrlForErrors(url));
    if (!current->account_key.empty() && config.account.empty()) {
      return PermissionDeniedError("an Azure account key without an account name for " +
                                   UrlForErrors(url));
    }
  }
  return state;
}

}  // namespace

Result<std::string> DescribeAzureAuth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(AzureOpenState state, AzureStateFromEnvironment(url));
  const AzureConfig& config = state.config;
  std::string out = config.scheme + "://" + config.container + "\n";
  out += "  account: " + (config.account.empty() ? std::string("(none)") : config.account) + "\n";
  out += "  endpoint: " + RedactUrl(config.endpoint) + "\n";
  if (!config.credential) {
    out += "  requests: anonymous (" + state.unsigned_reason + ")\n";
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(Credential current, config.credential->Get());
  const char* kind = !current.account_key.empty() ? "SharedKey signature"
                     : !current.sas_token.empty() ? "SAS token in the URL"
                                                  : "bearer token";
  return out + config.credential->DescribeInUse(current, kind);
}

Result<std::unique_ptr<Store>> OpenAzureStore(std::string_view url,
                                              boost::asio::any_io_executor executor,
                                              const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(AzureOpenState state, AzureStateFromEnvironment(url));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options,
                                              XmlErrorDetail));
  return std::unique_ptr<Store>(
      std::make_unique<AzureStore>(std::move(state.config), std::move(client), options));
}

}  // namespace sluice

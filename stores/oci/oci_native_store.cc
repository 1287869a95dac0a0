#include "stores/oci/oci_native_store.h"

#include <ctime>

#include "base/asio/co_status.h"
#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/oci_config.h"
#include "stores/credentials/oci_regions.h"
#include "stores/oci/oci_multipart.h"
#include "stores/signing/digest.h"
#include "stores/signing/oci_signature.h"
#include "stores/signing/uri_encoding.h"
#include "stores/web/web_store.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

struct OciLocation {
  std::string bucket;
  std::string ns;    // "" when the URL names none
  std::string path;  // no leading or trailing '/'
};

Result<OciLocation> ParseOciUrl(std::string_view url) {
  std::string_view rest = url.substr(std::string_view("oci://").size());
  const size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  OciLocation out;
  bool names_namespace = false;
  if (size_t at = bucket.find('@'); at != std::string_view::npos) {
    names_namespace = true;
    out.ns = std::string(bucket.substr(at + 1));
    bucket = bucket.substr(0, at);
  }
  out.bucket = std::string(bucket);
  std::string path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
  while (!path.empty() && path.back() == '/') path.pop_back();
  out.path = path;
  for (char c : url) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '?' || c == '#') {
      return InvalidArgumentError("malformed oci URL '" + std::string(url) +
                                  "': control character, '?' or '#'");
    }
  }
  const bool bad_name = out.ns.find_first_of("@%") != std::string::npos ||
                        out.bucket.find('%') != std::string::npos;
  if (out.bucket.empty() || (names_namespace && out.ns.empty()) || bad_name ||
      !ValidatePrefix(out.path, url).ok()) {
    return InvalidArgumentError("malformed oci URL '" + std::string(url) +
                                "' (expected oci://BUCKET[@NAMESPACE]/PATH)");
  }
  return out;
}

// The endpoint, no trailing '/'.
Result<std::string> Endpoint(const OciProfile& profile) {
  std::string ep = GetEnv("SLUICE_OCI_OBJECT_STORAGE_ENDPOINT").value_or("");
  if (ep.empty()) ep = OciServiceEndpoint("objectstorage", profile.region);
  auto parsed = ParseUrl(ep);
  if (!parsed.ok()) return InvalidArgumentError("the OCI endpoint is not a URL: " + parsed.status().message());
  return parsed->scheme + "://" + parsed->Authority();
}

// The Date and Authorization headers of a `method` request of `url`; with
// `json_body`, signed over the body too, as the SDK signs a POST, and its
// content-type and x-content-sha256 headers.
Result<HttpHeaders> SignedHeadersWith(const OciApiKey& key, HttpMethod method,
                                      const std::string& url, const std::string* json_body) {
  SLUICE_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
  OciRequestToSign r;
  r.method = HttpMethodName(method);
  r.host = parsed.Authority();
  r.target = parsed.target;
  r.date = OciHttpDate(static_cast<int64_t>(std::time(nullptr)));
  if (json_body != nullptr) {
    r.sign_body = true;
    r.content_length = json_body->size();
    r.content_type = "application/json";
    r.content_sha256_b64 = Base64Encode(Sha256(*json_body));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string auth, OciAuthorization(r, key));
  HttpHeaders out{{"date", r.date}, {"authorization", std::move(auth)}};
  if (json_body != nullptr) {
    out.emplace_back("content-type", r.content_type);
    out.emplace_back("x-content-sha256", r.content_sha256_b64);
  }
  return out;
}

// SignedHeadersWith the profile's key, fetched blocking (store open).
Result<HttpHeaders> SignedHeaders(const OciProfile& profile, HttpMethod method,
                                  const std::string& url) {
  SLUICE_ASSIGN_OR_RETURN(OciApiKey key, OciRequestKey(profile));
  return SignedHeadersWith(key, method, url, nullptr);
}

class OciNativeStore final : public BearerHttpStore {
 public:
  OciNativeStore(std::string root, std::string base, OciLocation loc, OciProfile profile,
                 std::unique_ptr<HttpClient> client, StoreOptions options)
      : BearerHttpStore(std::move(root), std::string(), std::move(client), std::move(options)),
        base_(std::move(base)),
        loc_(std::move(loc)),
        profile_(std::move(profile)) {}

  awaitable<Result<HttpHeaders>> RequestHeaders(HttpMethod method, const std::string& url) override {
    co_return co_await Sign(method, url, nullptr);
  }

  // The key of the next request: an instance or token-buying resource principal's through
  // AwaitGet() (a due refresh never blocks the event loop), else the
  // profile's (files read, no network).
  awaitable<Result<OciApiKey>> RequestKey() {
    if (profile_.session_credential) {
      SLUICE_CO_ASSIGN_OR_RETURN(Credential credential,
                                 co_await profile_.session_credential->AwaitGet());
      co_return OciSessionKey(credential);
    }
    co_return OciRequestKey(profile_);
  }

  awaitable<Result<HttpHeaders>> Sign(HttpMethod method, std::string url,
                                      const std::string* json_body) {
    SLUICE_CO_ASSIGN_OR_RETURN(OciApiKey key, co_await RequestKey());
    co_return SignedHeadersWith(key, method, url, json_body);
  }

  // Above part_size, a multipart upload (oci_multipart.h).
  awaitable<Status> PutFile(std::string key, std::string path) override {
    co_return co_await PutFileInParts(
        *this, std::move(key), std::move(path), options().part_size,
        [this](std::string key, std::string path, uint64_t size,
               uint64_t part) -> awaitable<Status> {
          OciMultipartTarget target;
          target.client = &client();
          target.base = base_;
          target.object = JoinKey(loc_.path, key);
          target.root = root();
          target.key = key;
          target.concurrency = options().upload_concurrency;
          target.sign = [this](HttpMethod method, const std::string& url, const std::string* body) {
            return Sign(method, url, body);
          };
          co_return co_await OciUploadInParts(target, std::move(path), size, part);
        });
  }

  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root()));
    const std::string full = JoinKey(loc_.path, prefix);
    const std::string dir = loc_.path.empty() ? "" : loc_.path + "/";
    std::vector<ObjectInfo> out;
    std::string start;
    for (int page = 0;; ++page) {
      if (page >= kMaxPages) co_return IoError(root() + ": listing has too many pages");
      HttpRequest req;
      req.url = base_ + "/o?prefix=" + UriEncode(prefix.empty() && !dir.empty() ? dir : full) +
                "&fields=name%2Csize%2Cetag" + (start.empty() ? "" : "&start=" + UriEncode(start));
      if (options().list_page_size > 0) req.url += "&limit=" + std::to_string(options().list_page_size);
      SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await RequestHeaders(req.method, req.url));
      auto resp = co_await client().Send(std::move(req));
      if (!resp.ok()) co_return resp.status().WithContext(root() + ": listing");
      auto json = ParsePyJson(resp->body);
      const JsonValue* objects = json.ok() ? JsonMember(*json, "objects") : nullptr;
      const auto* arr = objects ? std::get_if<JsonValue::Array>(&objects->v) : nullptr;
      if (arr == nullptr) co_return CorruptError(root() + ": listing has no 'objects' list");
      for (const JsonValue& o : *arr) {
        const std::string name = JsonStringMember(o, "name");
        if (name.compare(0, dir.size(), dir) != 0) continue;
        std::string key = name.substr(dir.size());
        if (key.compare(0, prefix.size(), prefix) != 0 || !ValidateKey(key, root()).ok()) continue;
        const JsonValue* size = JsonMember(o, "size");
        const auto* n = size ? std::get_if<int64_t>(&size->v) : nullptr;
        if (n == nullptr || *n < 0) co_return CorruptError(root() + ": object '" + name + "' has no size");
        out.push_back({std::move(key), static_cast<uint64_t>(*n), JsonStringMember(o, "etag")});
      }
      std::string next = JsonStringMember(*json, "nextStartWith");
      if (next.empty()) break;
      if (next <= start) co_return CorruptError(root() + ": listing does not advance");
      start = std::move(next);
    }
    SortByKey(&out);
    co_return out;
  }

 protected:
  bool Writable() const override { return true; }
  std::string ObjectUrl(const std::string& key) const override {
    return base_ + "/o/" + UriEncode(JoinKey(loc_.path, key));
  }

 private:
  static constexpr int kMaxPages = 1000000;

  std::string base_;  // {endpoint}/n/{ns}/b/{bucket}
  OciLocation loc_;
  OciProfile profile_;  // holds secrets
};

struct OciNative {
  OciLocation loc;
  OciProfile profile;
  std::string endpoint;
  std::string root;
  bool ns_asked = false;
};

Result<OciNative> Resolve(std::string_view url) {
  OciNative out;
  SLUICE_ASSIGN_OR_RETURN(out.loc, ParseOciUrl(url));
  auto profile = LoadOciProfile();
  if (!profile.ok()) {
    return Status(profile.status().code() == StatusCode::kNotFound ? StatusCode::kPermissionDenied
                                                                    : profile.status().code(),
                  profile.status().message())
        .WithContext(std::string(url));
  }
  out.profile = std::move(*profile);
  SLUICE_ASSIGN_OR_RETURN(out.endpoint, Endpoint(out.profile));
  if (out.loc.ns.empty()) {
    // As Mosaic: the tenancy's namespace, asked of the API.
    const std::string ns_url = out.endpoint + "/n/";
    HttpRequest req;
    req.url = ns_url;
    SLUICE_ASSIGN_OR_RETURN(req.headers, SignedHeaders(out.profile, HttpMethod::kGet, ns_url));
    HttpClientOptions options = CredentialEndpointOptions(10000);
    options.error_detail = OciErrorDetail;
    auto resp = SendBlocking(std::move(req), options);
    if (!resp.ok()) return resp.status().WithContext(std::string(url) + ": asking the namespace");
    auto json = ParsePyJson(resp->body);
    const auto* ns = json.ok() ? std::get_if<std::string>(&json->v) : nullptr;
    if (ns == nullptr || ns->empty() || ns->find_first_of("/?#% ") != std::string::npos) {
      return CorruptError(std::string(url) + ": the namespace answer is not a name");
    }
    out.loc.ns = *ns;
    out.ns_asked = true;
  }
  out.root = "oci://" + out.loc.bucket + "@" + out.loc.ns + (out.loc.path.empty() ? "" : "/" + out.loc.path);
  return out;
}

}  // namespace

bool WantsOciNativeApi(std::string_view url) {
  std::string_view rest = url.substr(std::min(url.size(), std::string_view("oci://").size()));
  if (rest.substr(0, rest.find('/')).find('@') != std::string_view::npos) return true;
  for (const char* s3 : {"OCI_NAMESPACE", "OCI_ENDPOINT_URL", "AWS_ACCESS_KEY_ID"}) {
    if (auto v = GetEnv(s3); v && !v->empty()) return false;
  }
  const std::string path = OciConfigPath();
  if (!path.empty() && FileExists(path)) return true;
  return OciResourcePrincipalConfigured() || GetEnv("OCI_CLI_AUTH").has_value();
}

Result<std::unique_ptr<Store>> OpenOciNativeStore(std::string_view url,
                                                  boost::asio::any_io_executor executor,
                                                  const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(OciNative n, Resolve(url));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options, OciErrorDetail));
  std::string base = n.endpoint + "/n/" + UriEncode(n.loc.ns) + "/b/" + UriEncode(n.loc.bucket);
  return std::unique_ptr<Store>(std::make_unique<OciNativeStore>(
      n.root, std::move(base), std::move(n.loc), std::move(n.profile), std::move(client), options));
}

Result<std::string> DescribeOciNativeAuth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(OciNative n, Resolve(url));
  std::string out = n.root + "\n";
  out += "  endpoint: " + n.endpoint + " (native Object Storage API)\n";
  out += "  namespace: " + n.loc.ns + (n.ns_asked ? " (asked of the API)" : " (from the URL)") + "\n";
  out += "  credentials: " + DescribeOciSigner(n.profile) + "\n";
  return out;
}

}  // namespace sluice

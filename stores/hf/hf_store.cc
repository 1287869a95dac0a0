#include "stores/hf/hf_store.h"

#include <cctype>
#include <ctime>

#include "base/asio/co_status.h"
#include "formats/json/py_json.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/anonymous_access.h"
#include "stores/credentials/hf_token.h"
#include "stores/hf/hf_url.h"
#include "stores/signing/uri_encoding.h"
#include "stores/web/web_store.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

constexpr char kDefaultEndpoint[] = "https://huggingface.co";
constexpr char kDisableToken[] = "HF_HUB_DISABLE_IMPLICIT_TOKEN";

// The Hub states what went wrong in X-Error-Code and X-Error-Message
// (RepositoryNotFound, EntryNotFound, RevisionNotFound, GatedRepo, ...).
std::string HubErrorHeaders(const HttpHeaders& headers) {
  std::string code, message;
  for (const auto& [name, value] : headers) {
    if (name == "x-error-code") code = value;
    if (name == "x-error-message") message = value;
  }
  std::string out = code.empty() ? message : message.empty() ? code : code + ": " + message;
  if (out.size() > 200) out.resize(200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

struct HfAuth {
  std::string bearer;      // a secret; "" when anonymous
  std::string source;      // the credential's source, or why anonymous
  std::string attempts;    // every source tried
};

Result<HfAuth> FindHfAuth() {
  HfAuth out;
  if (EnvFlag(kDisableToken)) {
    out.source = std::string(kDisableToken) + " is set";
    return out;
  }
  auto chain = MakeHfTokenChain();
  auto got = chain->Fetch(static_cast<int64_t>(std::time(nullptr)));
  out.attempts = chain->DescribeAttempts();
  if (!got.ok()) {
    if (got.status().code() != StatusCode::kNotFound) return got.status();
    out.source = got.status().message();
    return out;
  }
  out.bearer = std::move(got->bearer);
  out.source = std::move(got->source);
  return out;
}

Result<Url> HfEndpoint() {
  std::string endpoint = GetEnv("HF_ENDPOINT").value_or("");
  if (endpoint.empty()) endpoint = kDefaultEndpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  auto parsed = ParseUrl(endpoint);
  if (!parsed.ok()) return InvalidArgumentError("HF_ENDPOINT: " + parsed.status().message());
  return parsed;
}

class HfStore final : public BearerHttpStore {
 public:
  HfStore(std::string root, std::string endpoint, HfRepoPath repo, std::string bearer,
          std::unique_ptr<HttpClient> client, StoreOptions options)
      : BearerHttpStore(std::move(root), std::move(bearer), std::move(client), std::move(options)),
        endpoint_(std::move(endpoint)),
        repo_(std::move(repo)) {}

  // The Hub lists a folder's whole subtree (recursive=true); the folder is
  // the one the prefix's complete components name.
  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root()));
    const size_t slash = prefix.rfind('/');
    const std::string folder = slash == std::string::npos
                                   ? repo_.path
                                   : JoinKey(repo_.path, prefix.substr(0, slash));
    std::string url = endpoint_ + "/api/" + repo_.repo_type + "s/" + EncodeUriPath(repo_.repo_id) +
                      "/tree/" + UriEncode(repo_.revision) +
                      (folder.empty() ? "" : "/" + UriEncode(folder)) +
                      "?recursive=true&expand=false";
    SLUICE_CO_ASSIGN_OR_RETURN(const std::string origin, PoolKeyOf(endpoint_));
    const std::string base = repo_.path.empty() ? "" : repo_.path + "/";
    std::vector<ObjectInfo> out;
    for (int page = 0;; ++page) {
      if (page >= kMaxPages) {
        co_return IoError(root() + ": listing has more than " + std::to_string(kMaxPages) + " pages");
      }
      HttpRequest req;
      req.url = url;
      SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await AuthHeaders());
      auto resp = co_await client().Send(std::move(req));
      if (!resp.ok()) {
        // A folder that does not exist lists as empty, as a missing local
        // folder does; a missing repository or revision is an error.
        if (resp.status().code() == StatusCode::kNotFound &&
            resp.status().message().find("(EntryNotFound") != std::string::npos) {
          co_return out;
        }
        co_return resp.status().WithContext(root() + ": listing " + (folder.empty() ? "/" : folder));
      }
      SLUICE_CO_RETURN_IF_ERROR(ParsePage(resp->body, base, prefix, &out));
      std::string next = NextPageLink(resp->Header("link"));
      if (next.empty()) break;
      // The token goes only to the Hub's own origin.
      auto next_origin = PoolKeyOf(next);
      if (!next_origin.ok() || *next_origin != origin) {
        co_return CorruptError(root() + ": listing's next page is not on " + RedactUrl(endpoint_) +
                               ": " + RedactUrl(next));
      }
      if (next == url) co_return CorruptError(root() + ": listing repeats its page");
      url = std::move(next);
    }
    SortByKey(&out);
    co_return out;
  }

 protected:
  std::string ObjectUrl(const std::string& key) const override {
    return endpoint_ + "/" + repo_.UrlPrefix() + EncodeUriPath(repo_.repo_id) + "/resolve/" +
           UriEncode(repo_.revision) + "/" + EncodeUriPath(JoinKey(repo_.path, key));
  }

 private:
  static constexpr int kMaxPages = 100000;

  static Result<std::string> PoolKeyOf(const std::string& url) {
    SLUICE_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
    return parsed.PoolKey();
  }

  // The files of one page (a JSON list of {"type", "path", "size", "oid", ...}),
  // keyed relative to the root, those starting with `prefix` appended.
  Status ParsePage(std::string_view body, const std::string& base, const std::string& prefix,
                   std::vector<ObjectInfo>* out) const {
    auto json = ParsePyJson(body);
    if (!json.ok()) return CorruptError(root() + ": tree listing is not JSON");
    const auto* entries = std::get_if<JsonValue::Array>(&json->v);
    if (entries == nullptr) return CorruptError(root() + ": tree listing is not a list");
    for (const JsonValue& entry : *entries) {
      if (JsonStringMember(entry, "type") != "file") continue;
      const std::string path = JsonStringMember(entry, "path");
      if (path.compare(0, base.size(), base) != 0) {
        return CorruptError(root() + ": tree entry '" + path + "' outside the listed folder");
      }
      std::string key = path.substr(base.size());
      if (!ValidateKey(key, root()).ok()) {
        return CorruptError(root() + ": tree entry '" + path + "' is not a valid key");
      }
      const JsonValue* size = JsonMember(entry, "size");
      const auto* n = size ? std::get_if<int64_t>(&size->v) : nullptr;
      if (n == nullptr || *n < 0) {
        return CorruptError(root() + ": tree entry '" + path + "' has no size");
      }
      if (key.compare(0, prefix.size(), prefix) == 0) {
        // "oid": the git blob's id, which changes with the file (an LFS
        // file's pointer blob names its content's sha256).
        out->push_back({std::move(key), static_cast<uint64_t>(*n), JsonStringMember(entry, "oid")});
      }
    }
    return Status::Ok();
  }

  std::string endpoint_;  // scheme://authority[/path], no trailing '/'
  HfRepoPath repo_;
};

std::string RootOf(std::string_view url) {
  std::string root(url);
  while (root.size() > 5 && root.back() == '/') root.pop_back();
  return root;
}

}  // namespace

std::string NextPageLink(std::string_view link) {
  // <url>; rel="next", <url2>; rel="prev"
  size_t pos = 0;
  while (pos < link.size()) {
    const size_t open = link.find('<', pos);
    if (open == std::string_view::npos) return "";
    const size_t close = link.find('>', open);
    if (close == std::string_view::npos) return "";
    size_t end = link.find('<', close);
    std::string_view params = link.substr(close + 1, end == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : end - close - 1);
    std::string lower;
    for (char c : params) {
      if (c != ' ' && c != '\t') lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (lower.find(";rel=\"next\"") != std::string::npos ||
        lower.find(";rel=next") != std::string::npos) {
      return std::string(link.substr(open + 1, close - open - 1));
    }
    if (end == std::string_view::npos) return "";
    pos = end;
  }
  return "";
}

Result<std::unique_ptr<Store>> OpenHfStore(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(HfRepoPath repo, ParseHfUrl(url));
  SLUICE_ASSIGN_OR_RETURN(Url endpoint, HfEndpoint());
  auto auth = FindHfAuth();
  if (!auth.ok()) return auth.status().WithContext(RootOf(url));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options, nullptr,
                                              HubErrorHeaders));
  std::string base = endpoint.ToString();
  while (!base.empty() && base.back() == '/') base.pop_back();
  return std::unique_ptr<Store>(std::make_unique<HfStore>(RootOf(url), std::move(base),
                                                          std::move(repo), std::move(auth->bearer),
                                                          std::move(client), options));
}

Result<std::string> DescribeHfAuth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(HfRepoPath repo, ParseHfUrl(url));
  SLUICE_ASSIGN_OR_RETURN(Url endpoint, HfEndpoint());
  auto auth = FindHfAuth();
  if (!auth.ok()) return auth.status().WithContext(RootOf(url));
  std::string out = RootOf(url) + "\n";
  std::string shown = endpoint.Redacted();
  while (!shown.empty() && shown.back() == '/') shown.pop_back();
  out += "  endpoint: " + shown + "\n";
  out += "  repository: " + repo.repo_type + " " + repo.repo_id + ", revision " + repo.revision + "\n";
  if (auth->bearer.empty()) {
    out += "  requests: anonymous (" + auth->source + ")\n";
  } else {
    out += "  token: " + auth->source + " (bearer token)\n";
  }
  if (!auth->attempts.empty()) out += "  sources tried: " + auth->attempts + "\n";
  return out;
}

}  // namespace sluice

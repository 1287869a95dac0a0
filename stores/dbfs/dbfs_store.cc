#include "stores/dbfs/dbfs_store.h"

#include <algorithm>

#include "base/asio/co_status.h"
#include "formats/json/py_json.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/store_keys.h"
#include "stores/signing/sigv4.h"
#include "stores/signing/uri_encoding.h"
#include "stores/web/web_store.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

const JsonValue* Field(const JsonValue& obj, std::string_view name) {
  const auto* o = std::get_if<JsonValue::Object>(&obj.v);
  if (o == nullptr) return nullptr;
  for (const auto& [k, v] : *o) {
    if (k == name) return &v;
  }
  return nullptr;
}

class DbfsStore final : public BearerHttpStore {
 public:
  DbfsStore(std::string root, std::string host, std::string path, std::string token,
            std::unique_ptr<HttpClient> client, StoreOptions options)
      : BearerHttpStore(std::move(root), std::move(token), std::move(client), std::move(options)),
        host_(std::move(host)),
        path_(std::move(path)) {}

  awaitable<Status> Put(std::string key, std::string bytes) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    HttpRequest req = UploadRequest(key);
    req.body = std::move(bytes);
    co_return (co_await SendForObject(client(), std::move(req), root(), key)).status();
  }

  // One request, its body streamed from the file.
  awaitable<Status> PutFile(std::string key, std::string path) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidateKey(key, root()));
    HttpRequest req = UploadRequest(key);
    req.body_file = std::move(path);
    co_return (co_await SendForObject(client(), std::move(req), root(), key)).status();
  }

  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root()));
    // Walk from the folder the prefix's complete components name.
    size_t slash = prefix.rfind('/');
    std::string start = slash == std::string::npos ? "" : prefix.substr(0, slash);
    std::vector<ObjectInfo> out;
    std::vector<std::string> folders = {start};  // relative to path_
    size_t visited = 0;
    while (!folders.empty()) {
      if (++visited > 100000) co_return IoError(root() + ": more than 100000 folders to list");
      std::string rel = std::move(folders.back());
      folders.pop_back();
      std::string dir = rel.empty() ? path_ : path_ + "/" + rel;
      std::string page_token;
      for (int page = 0;; ++page) {
        HttpRequest req;
        req.url = host_ + "/api/2.0/fs/directories" + EncodeUriPath(dir);
        std::vector<SigningQueryParam> query;
        if (options().list_page_size > 0) {
          query.push_back({"page_size", std::to_string(options().list_page_size)});
        }
        if (!page_token.empty()) query.push_back({"page_token", page_token});
        if (!query.empty()) req.url += "?" + EncodeQueryString(query);
        req.headers = AuthHeaders();
        auto resp = co_await client().Send(std::move(req));
        if (!resp.ok()) {
          // A missing root lists as empty, as for local folders.
          if (resp.status().code() == StatusCode::kNotFound && rel == start) break;
          co_return Context(resp.status(), rel);
        }
        auto json = ParsePyJson(resp->body);
        if (!json.ok()) co_return CorruptError(root() + ": directory listing is not JSON");
        if (const JsonValue* contents = Field(*json, "contents")) {
          const auto* arr = std::get_if<JsonValue::Array>(&contents->v);
          if (arr == nullptr) co_return CorruptError(root() + ": 'contents' is not a list");
          for (const JsonValue& entry : *arr) {
            const JsonValue* p = Field(entry, "path");
            const auto* full = p ? std::get_if<std::string>(&p->v) : nullptr;
            if (full == nullptr || full->compare(0, path_.size() + 1, path_ + "/") != 0) {
              co_return CorruptError(root() + ": directory entry outside " + path_);
            }
            std::string key = full->substr(path_.size() + 1);
            while (!key.empty() && key.back() == '/') key.pop_back();
            if (!ValidateKey(key, root()).ok()) {
              co_return CorruptError(root() + ": directory entry '" + key + "' is not a valid key");
            }
            const JsonValue* is_dir = Field(entry, "is_directory");
            if (is_dir && std::holds_alternative<bool>(is_dir->v) && std::get<bool>(is_dir->v)) {
              folders.push_back(key);
              continue;
            }
            uint64_t size = 0;
            if (const JsonValue* fs = Field(entry, "file_size")) {
              if (const auto* i = std::get_if<int64_t>(&fs->v); i && *i >= 0) {
                size = static_cast<uint64_t>(*i);
              }
            }
            if (key.compare(0, prefix.size(), prefix) == 0) out.push_back({key, size});
          }
        }
        const JsonValue* next = Field(*json, "next_page_token");
        const auto* next_s = next ? std::get_if<std::string>(&next->v) : nullptr;
        if (next_s == nullptr || next_s->empty()) break;
        if (*next_s == page_token) co_return CorruptError(root() + ": listing repeats its page token");
        page_token = *next_s;
      }
    }
    SortByKey(&out);
    co_return out;
  }

 protected:
  std::string ObjectUrl(const std::string& key) const override {
    return host_ + "/api/2.0/fs/files" + EncodeUriPath(path_ + "/" + key);
  }

 private:
  // The PUT of `key` (validated), without its body.
  HttpRequest UploadRequest(const std::string& key) const {
    HttpRequest req;
    req.method = HttpMethod::kPut;
    req.url = ObjectUrl(key) + "?overwrite=true";
    req.headers = AuthHeaders();
    req.headers.emplace_back("content-type", "application/octet-stream");
    return req;
  }

  std::string host_;  // scheme://authority, no trailing '/'
  std::string path_;  // "/Volumes/c/s/v/prefix", no trailing '/'
};

}  // namespace

Result<std::unique_ptr<Store>> OpenDbfsStore(std::string_view url,
                                             boost::asio::any_io_executor executor,
                                             const StoreOptions& options) {
  std::string_view rest = url.substr(5);  // after "dbfs:"
  while (rest.size() > 1 && rest.substr(0, 2) == "//") rest.remove_prefix(1);
  std::string path(rest);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.rfind("/Volumes/", 0) != 0) {
    return UnimplementedError("only dbfs:/Volumes/... paths are supported (Unity Catalog volumes), not '" +
                              std::string(url) + "'");
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '?' || c == '#') {
      return InvalidArgumentError("malformed dbfs URL '" + std::string(url) +
                                  "': control character, '?' or '#'");
    }
  }
  if (!ValidatePrefix(path.substr(1), url).ok()) {
    return InvalidArgumentError("malformed dbfs URL '" + std::string(url) +
                                "': empty, '.' or '..' path component");
  }
  auto host = GetEnv("DATABRICKS_HOST");
  auto token = GetEnv("DATABRICKS_TOKEN");
  if (!host || !token) {
    return PermissionDeniedError(
                  "no Databricks workspace for " + std::string(url) + ": set " +
                      (host ? "" : "DATABRICKS_HOST") + (!host && !token ? " and " : "") +
                      (token ? "" : "DATABRICKS_TOKEN"));
  }
  std::string h = *host;
  if (h.find("://") == std::string::npos) h = "https://" + h;
  auto parsed = ParseUrl(h);
  if (!parsed.ok()) {
    return InvalidArgumentError("DATABRICKS_HOST is not a URL: " + parsed.status().message());
  }
  std::string base = parsed->scheme + "://" + parsed->Authority();
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options));
  return std::unique_ptr<Store>(std::make_unique<DbfsStore>(
      "dbfs:" + path, std::move(base), path, std::move(*token), std::move(client), options));
}

}  // namespace sluice

#include "stores/dbfs/dbfs_store.h"

#include <algorithm>

#include "base/asio/co_status.h"
#include "formats/json/py_json.h"
#include "stores/common/object_http.h"
#include "stores/common/object_listing.h"
#include "stores/common/part_uploads.h"
#include "stores/common/tree_listing.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/credentials/databricks_model_serving.h"
#include "stores/credentials/databricks_runtime_token.h"
#include "stores/signing/sigv4.h"
#include "stores/signing/uri_encoding.h"
#include "stores/web/web_store.h"

namespace sluice {
namespace {

using boost::asio::awaitable;

class DbfsStore final : public BearerHttpStore {
 public:
  DbfsStore(std::string root, std::string host, std::string path,
            std::shared_ptr<SharedCredential> credential, std::unique_ptr<HttpClient> client,
            StoreOptions options)
      : BearerHttpStore(std::move(root), std::move(credential), std::move(client),
                        std::move(options)),
        host_(std::move(host)),
        path_(std::move(path)) {}

  // Folder by folder, a level at a time, with the folders of a level listed
  // concurrently: the Files API has no recursive listing, and a volume of
  // many folders would otherwise cost one round trip per folder in turn.
  awaitable<Result<std::vector<ObjectInfo>>> List(std::string prefix) override {
    SLUICE_CO_RETURN_IF_ERROR(ValidatePrefix(prefix, root()));
    // Walk from the folder the prefix's complete components name.
    size_t slash = prefix.rfind('/');
    std::string start = slash == std::string::npos ? "" : prefix.substr(0, slash);
    std::vector<ObjectInfo> out;
    std::vector<std::string> level = {start};  // relative to path_
    size_t visited = 0;
    while (!level.empty()) {
      visited += level.size();
      if (visited > kMaxFolders) {
        co_return IoError(root() + ": more than " + std::to_string(kMaxFolders) +
                          " folders to list");
      }
      std::vector<FolderListing> listings(level.size());
      SLUICE_CO_RETURN_IF_ERROR(co_await ForEachPartConcurrently(
          level.size(), kConcurrentListings,
          [&](uint64_t i) -> awaitable<Status> {
            co_return co_await ListFolder(level[i], level[i] == start, &listings[i]);
          }));
      std::vector<std::string> next;
      for (FolderListing& listing : listings) {
        for (ObjectInfo& file : listing.files) {
          if (file.key.compare(0, prefix.size(), prefix) == 0) out.push_back(std::move(file));
        }
        for (std::string& folder : listing.folders) {
          // Only folders that can hold a key with the prefix.
          const std::string as_prefix = folder + "/";
          const size_t n = std::min(as_prefix.size(), prefix.size());
          if (as_prefix.compare(0, n, prefix, 0, n) == 0) next.push_back(std::move(folder));
        }
      }
      level = std::move(next);
    }
    SortByKey(&out);
    co_return out;
  }

 protected:
  bool Writable() const override { return true; }
  std::string UploadQuery() const override { return "?overwrite=true"; }
  std::string ObjectUrl(const std::string& key) const override {
    return host_ + "/api/2.0/fs/files" + EncodeUriPath(path_ + "/" + key);
  }

 private:
  static constexpr size_t kMaxFolders = 100000;

  struct FolderListing {
    std::vector<ObjectInfo> files;     // keys relative to path_
    std::vector<std::string> folders;  // the same
  };

  // Every page of one folder `rel` (relative to path_). A missing root
  // lists as empty, as a missing local folder does.
  awaitable<Status> ListFolder(const std::string& rel, bool is_root, FolderListing* listing) {
    std::string dir = rel.empty() ? path_ : path_ + "/" + rel;
    std::string page_token;
    while (true) {
      HttpRequest req;
      req.url = host_ + "/api/2.0/fs/directories" + EncodeUriPath(dir);
      std::vector<SigningQueryParam> query;
      if (options().list_page_size > 0) {
        query.push_back({"page_size", std::to_string(options().list_page_size)});
      }
      if (!page_token.empty()) query.push_back({"page_token", page_token});
      if (!query.empty()) req.url += "?" + EncodeQueryString(query);
      SLUICE_CO_ASSIGN_OR_RETURN(req.headers, co_await AuthHeaders());
      auto resp = co_await client().Send(std::move(req));
      if (!resp.ok()) {
        if (resp.status().code() == StatusCode::kNotFound && is_root) co_return Status::Ok();
        co_return Context(resp.status(), rel);
      }
      auto json = ParsePyJson(resp->body);
      if (!json.ok()) co_return CorruptError(root() + ": directory listing is not JSON");
      if (const JsonValue* contents = JsonMember(*json, "contents")) {
        const auto* arr = std::get_if<JsonValue::Array>(&contents->v);
        if (arr == nullptr) co_return CorruptError(root() + ": 'contents' is not a list");
        for (const JsonValue& entry : *arr) {
          const JsonValue* p = JsonMember(entry, "path");
          const auto* full = p ? std::get_if<std::string>(&p->v) : nullptr;
          if (full == nullptr || full->compare(0, path_.size() + 1, path_ + "/") != 0) {
            co_return CorruptError(root() + ": directory entry outside " + path_);
          }
          std::string key = full->substr(path_.size() + 1);
          while (!key.empty() && key.back() == '/') key.pop_back();
          if (!ValidateKey(key, root()).ok()) {
            co_return CorruptError(root() + ": directory entry '" + key + "' is not a valid key");
          }
          const JsonValue* is_dir = JsonMember(entry, "is_directory");
          if (is_dir && std::holds_alternative<bool>(is_dir->v) && std::get<bool>(is_dir->v)) {
            listing->folders.push_back(std::move(key));
            continue;
          }
          uint64_t size = 0;
          if (const JsonValue* fs = JsonMember(entry, "file_size")) {
            if (const auto* i = std::get_if<int64_t>(&fs->v); i && *i >= 0) {
              size = static_cast<uint64_t>(*i);
            }
          }
          // The file's version, for the listing's fingerprint and a Parquet
          // piece's name: its last_modified (ms), "" when absent. The Files
          // API has no ETag, and no conditional read (BearerHttpStore's
          // GetRangeOnlyOfVersion checks the size alone).
          std::string version;
          if (const JsonValue* m = JsonMember(entry, "last_modified")) {
            if (const auto* i = std::get_if<int64_t>(&m->v); i && *i > 0) {
              version = "mtime-ms " + std::to_string(*i);
            }
          }
          listing->files.push_back({std::move(key), size, std::move(version)});
        }
      }
      std::string next = JsonStringMember(*json, "next_page_token");
      if (next.empty()) co_return Status::Ok();
      if (next == page_token) co_return CorruptError(root() + ": listing repeats its page token");
      page_token = std::move(next);
    }
  }

  std::string host_;  // scheme://authority, no trailing '/'
  std::string path_;  // "/Volumes/c/s/v/prefix", no trailing '/'
};

}  // namespace

namespace {

// "/Volumes/..." of a dbfs: URL, checked.
Result<std::string> VolumePath(std::string_view url) {
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
  return path;
}

struct DbfsAuth {
  DatabricksConfig config;
  std::shared_ptr<SharedCredential> credential;
  Credential current;  // holds secrets
};

// The workspace and its credential, fetched once (blocking) so that a
// missing or broken one fails at open.
Result<DbfsAuth> FindDbfsAuth(std::string_view url) {
  DbfsAuth out;
  SLUICE_ASSIGN_OR_RETURN(out.config, LoadDatabricksConfig());
  const Status runtime = FillDatabricksRuntimeHost(&out.config);
  FillDatabricksModelServingHost(&out.config);
  if (out.config.host.empty()) {
    return PermissionDeniedError("no Databricks workspace for " + std::string(url) +
                                 ": set DATABRICKS_HOST, or a host in a profile of "
                                 "~/.databrickscfg (DATABRICKS_CONFIG_FILE)" +
                                 (runtime.ok() ? "" : "; " + runtime.message()));
  }
  out.credential = DatabricksSharedCredential(out.config);
  auto current = out.credential->Get();
  if (!current.ok()) {
    if (current.status().code() == StatusCode::kNotFound) {
      return PermissionDeniedError(
          "no Databricks credentials for " + std::string(url) +
          ": set DATABRICKS_TOKEN, or DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET, or "
          "use a profile of ~/.databrickscfg that has them (" + current.status().message() + ")");
    }
    return current.status().WithContext(std::string(url));
  }
  out.current = std::move(*current);
  return out;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenDbfsStore(std::string_view url,
                                             boost::asio::any_io_executor executor,
                                             const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, VolumePath(url));
  SLUICE_ASSIGN_OR_RETURN(DbfsAuth auth, FindDbfsAuth(url));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client,
                          MakeStoreHttpClient(std::move(executor), options));
  return std::unique_ptr<Store>(std::make_unique<DbfsStore>(
      "dbfs:" + path, auth.config.host, path, std::move(auth.credential), std::move(client),
      options));
}

Result<std::string> DescribeDbfsAuth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(std::string path, VolumePath(url));
  SLUICE_ASSIGN_OR_RETURN(DbfsAuth auth, FindDbfsAuth(url));
  std::string out = "dbfs:" + path + "\n";
  out += "  host: " + auth.config.host + " (from " + auth.config.origin["host"] + ")\n";
  if (!auth.config.profile.empty()) {
    out += "  profile: " + auth.config.profile + " of " + auth.config.config_file + "\n";
  }
  return out + auth.credential->DescribeInUse(auth.current, "bearer token");
}

}  // namespace sluice

#include "tests/stores/common/fake_databricks_files.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "tests/stores/common/node_servers.h"

namespace sluice::testing {

FakeDatabricksFiles::FakeDatabricksFiles()
    : server_([this](const FakeRequest& r) { return Handle(r); }) {}

void FakeDatabricksFiles::Put(const std::string& path, std::string bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  files_[path] = std::move(bytes);
  modified_[path] = ++clock_ms_;
}

void FakeDatabricksFiles::AcceptToken(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  accepted_.insert(token);
}

std::map<std::string, std::optional<std::string>> FakeDatabricksFiles::StoreEnv() const {
  auto env = CleanStoreEnv();
  env["DATABRICKS_HOST"] = url();
  env["DATABRICKS_TOKEN"] = kToken;
  return env;
}

std::vector<std::string> FakeDatabricksFiles::bearers() {
  std::lock_guard<std::mutex> lock(mu_);
  return bearers_;
}

int FakeDatabricksFiles::gets(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = gets_.find(path);
  return it == gets_.end() ? 0 : it->second;
}

int FakeDatabricksFiles::list_pages() {
  std::lock_guard<std::mutex> lock(mu_);
  return list_pages_;
}

void FakeDatabricksFiles::SetAadTenant(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(mu_);
  aad_tenant_ = tenant;
}

std::vector<std::string> FakeDatabricksFiles::management_tokens() {
  std::lock_guard<std::mutex> lock(mu_);
  return management_tokens_;
}

std::vector<std::string> FakeDatabricksFiles::resource_ids() {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_ids_;
}

void FakeDatabricksFiles::ServeTokenEndpoint(std::function<FakeResponse(const FakeRequest&)> handler) {
  token_endpoint_ = std::move(handler);
}

FakeResponse FakeDatabricksFiles::Handle(const FakeRequest& r) {
  if (r.method == "POST" && r.target == "/oidc/v1/token") {
    return token_endpoint_ ? token_endpoint_(r) : FakeResponse{404, {}, ""};
  }
  if (r.target.rfind("/api/2.0/fs/directories", 0) != 0) return HandleLocked(r);
  int now = ++lists_in_flight_;
  for (int seen = max_lists_in_flight; now > seen &&
       !max_lists_in_flight.compare_exchange_weak(seen, now);) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(list_delay_ms.load()));
  FakeResponse response = HandleLocked(r);
  --lists_in_flight_;
  return response;
}

FakeResponse FakeDatabricksFiles::HandleLocked(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (r.method == "GET" && r.target == "/aad/auth") {  // an Azure workspace's sign-in page
    if (aad_tenant_.empty()) return {404, {}, ""};
    return {302, {{"Location", "https://login.microsoftonline.com/" + aad_tenant_ +
                                   "/oauth2/authorize?client_id=2ff814a6&redirect_uri=x"}}, ""};
  }
  const std::string auth = r.Header("authorization");
  bearers_.push_back(auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : auth);
  management_tokens_.push_back(r.Header("x-databricks-azure-sp-management-token"));
  resource_ids_.push_back(r.Header("x-databricks-azure-workspace-resource-id"));
  if (auth.rfind("Bearer ", 0) != 0 || accepted_.count(auth.substr(7)) == 0) {
    return {401, {}, "{\"error_code\":\"UNAUTHENTICATED\"}"};
  }
  std::string target = r.target;
  std::string query;
  if (size_t q = target.find('?'); q != std::string::npos) {
    query = target.substr(q + 1);
    target.resize(q);
  }
  // The Files API decodes the path ("part%3Db" is the folder "part=b").
  target = PercentDecoded(target);
  const std::string files = "/api/2.0/fs/files";
  const std::string dirs = "/api/2.0/fs/directories";
  if (target.rfind(files, 0) == 0) {
    std::string path = target.substr(files.size());
    if (r.method == "PUT") {
      if (query != "overwrite=true") return {400, {}, "overwrite"};
      files_[path] = r.body;
      modified_[path] = ++clock_ms_;
      return {204, {}, ""};
    }
    auto it = files_.find(path);
    if (it == files_.end()) return {404, {}, "{\"error_code\":\"NOT_FOUND\"}"};
    if (r.method == "GET") ++gets_[path];
    std::string range = r.Header("range");
    if (!range.empty()) {
      size_t dash = range.find('-');
      uint64_t first = std::stoull(range.substr(6, dash - 6));
      uint64_t last =
          std::min<uint64_t>(std::stoull(range.substr(dash + 1)), it->second.size() - 1);
      if (first >= it->second.size()) return {416, {}, ""};
      return {206,
              {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                     "/" + std::to_string(it->second.size())}},
              it->second.substr(first, last - first + 1)};
    }
    return {200, {}, it->second};
  }
  if (target.rfind(dirs, 0) == 0) {
    if (failing_listings_.count(target.substr(dirs.size()))) {
      return {404, {}, "{\"error_code\":\"NOT_FOUND\"}"};
    }
    std::string dir = target.substr(dirs.size()) + "/";
    // Immediate children, sorted; pages of page_size, token = index.
    std::vector<std::string> entries;
    std::map<std::string, bool> seen_dirs;
    for (const auto& [path, body] : files_) {
      if (path.rfind(dir, 0) != 0) continue;
      std::string rest = path.substr(dir.size());
      size_t slash = rest.find('/');
      if (slash == std::string::npos) {
        entries.push_back("{\"path\": \"" + path + "\", \"is_directory\": false, \"file_size\": " +
                          std::to_string(body.size()) + ", \"last_modified\": " +
                          std::to_string(modified_[path]) + ", \"name\": \"" + rest + "\"}");
      } else if (!seen_dirs[rest.substr(0, slash)]) {
        seen_dirs[rest.substr(0, slash)] = true;
        entries.push_back("{\"path\": \"" + dir + rest.substr(0, slash) +
                          "/\", \"is_directory\": true, \"name\": \"" + rest.substr(0, slash) +
                          "\"}");
      }
    }
    if (entries.empty()) return {404, {}, "{\"error_code\":\"NOT_FOUND\"}"};
    size_t start = 0, size = 1000;
    for (const std::string& kv : {std::string("page_size="), std::string("page_token=")}) {
      size_t p = query.find(kv);
      if (p == std::string::npos) continue;
      size_t v = std::stoull(query.substr(p + kv.size()));
      if (kv == "page_size=") size = v; else start = v;
    }
    std::string body = "{\"contents\": [";
    size_t end = std::min(entries.size(), start + size);
    for (size_t i = start; i < end; ++i) body += (i > start ? ", " : "") + entries[i];
    body += "]";
    if (end < entries.size()) body += ", \"next_page_token\": \"" + std::to_string(end) + "\"";
    ++list_pages_;
    return {200, {{"Content-Type", "application/json"}}, body + "}"};
  }
  return {404, {}, ""};
}

void FakeDatabricksFiles::FailListing(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_listings_.insert(dir);
}

}  // namespace sluice::testing

#include "tests/stores/common/fake_hf_hub.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>

namespace sluice::testing {
namespace {

FakeResponse HubError(int status, const std::string& code, const std::string& message) {
  return {status, {{"X-Error-Code", code}, {"X-Error-Message", message},
                   {"Content-Type", "application/json"}},
          "{\"error\": \"" + message + "\"}"};
}

// `bytes` answered for `r`'s method and Range header.
FakeResponse Serve(const FakeRequest& r, const std::string& bytes,
                   std::vector<std::pair<std::string, std::string>> headers) {
  std::string range = r.Header("range");
  if (range.empty() || r.method == "HEAD") {
    headers.emplace_back("Content-Length", std::to_string(bytes.size()));
    return {200, headers, r.method == "HEAD" ? "" : bytes};
  }
  const size_t dash = range.find('-');
  const uint64_t first = std::stoull(range.substr(6, dash - 6));
  uint64_t last = bytes.empty() ? 0 : bytes.size() - 1;
  if (dash + 1 < range.size()) last = std::min<uint64_t>(std::stoull(range.substr(dash + 1)), last);
  if (first >= bytes.size()) return {416, {}, ""};
  headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                            std::to_string(last) + "/" +
                                            std::to_string(bytes.size()));
  return {206, headers, bytes.substr(first, last - first + 1)};
}

}  // namespace

FakeHfHub::FakeHfHub()
    : cdn_([this](const FakeRequest& r) { return HandleCdn(r); }),
      hub_([this](const FakeRequest& r) { return HandleHub(r); }) {}

std::string FakeHfHub::OidOf(const std::string& bytes) {
  return "oid-" + std::to_string(std::hash<std::string>{}(bytes));
}

void FakeHfHub::Put(const std::string& repo, const std::string& revision, const std::string& path,
                    std::string bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  repos_[repo][revision][path] = std::move(bytes);
}

std::vector<std::string> FakeHfHub::cdn_authorizations() {
  std::lock_guard<std::mutex> lock(mu_);
  return cdn_auth_;
}

std::vector<std::string> FakeHfHub::hub_authorizations() {
  std::lock_guard<std::mutex> lock(mu_);
  return hub_auth_;
}

int FakeHfHub::tree_pages() {
  std::lock_guard<std::mutex> lock(mu_);
  return tree_pages_;
}

int FakeHfHub::cdn_gets() {
  std::lock_guard<std::mutex> lock(mu_);
  return cdn_gets_;
}

FakeResponse FakeHfHub::HandleCdn(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!r.Header("authorization").empty()) cdn_auth_.push_back(r.Header("authorization"));
  std::string target = r.target;
  const size_t q = target.find('?');
  if (q == std::string::npos || target.substr(q) != "?X-Amz-Signature=cdn-signed") {
    return {403, {}, "<Error><Code>AccessDenied</Code></Error>"};
  }
  auto it = blobs_.find(target.substr(0, q));
  if (it == blobs_.end()) return {404, {}, ""};
  if (r.method == "GET") ++cdn_gets_;
  return Serve(r, it->second, {});
}

FakeResponse FakeHfHub::HandleHub(const FakeRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string auth = r.Header("authorization");
  if (!auth.empty()) hub_auth_.push_back(auth);
  if (!auth.empty() && auth != std::string("Bearer ") + kToken) {
    return HubError(401, "", "Invalid credentials in Authorization header");
  }
  if (require_token && auth.empty()) {
    return HubError(401, "RepositoryNotFound", "Repository not found");
  }
  std::string target = r.target;
  std::string query;
  if (size_t q = target.find('?'); q != std::string::npos) {
    query = target.substr(q + 1);
    target.resize(q);
  }
  // Split into segments, each still encoded.
  std::vector<std::string> seg;
  for (size_t pos = 1; pos <= target.size();) {
    size_t next = target.find('/', pos);
    if (next == std::string::npos) next = target.size();
    seg.push_back(target.substr(pos, next - pos));
    pos = next + 1;
  }
  const bool api = !seg.empty() && seg[0] == "api";
  size_t i = api ? 1 : 0;
  std::string type_prefix;
  if (i < seg.size() && (seg[i] == "datasets" || seg[i] == "spaces" || (api && seg[i] == "models"))) {
    if (seg[i] != "models") type_prefix = seg[i] + "/";
    ++i;
  } else if (api) {
    return HubError(404, "", "no such API");
  }
  if (i + 3 > seg.size()) return HubError(404, "", "no such page");
  const std::string repo = type_prefix + seg[i] + "/" + seg[i + 1];
  const std::string verb = seg[i + 2];
  std::string revision = i + 3 < seg.size() ? PercentDecoded(seg[i + 3]) : "main";
  std::string path;
  for (size_t k = i + 4; k < seg.size(); ++k) path += (path.empty() ? "" : "/") + PercentDecoded(seg[k]);
  auto repo_it = repos_.find(repo);
  if (repo_it == repos_.end()) return HubError(404, "RepositoryNotFound", "Repository not found");
  auto rev_it = repo_it->second.find(revision);
  if (rev_it == repo_it->second.end()) {
    return HubError(404, "RevisionNotFound", "Invalid rev id: " + revision);
  }
  const auto& files = rev_it->second;
  if (!api && verb == "resolve") {
    auto it = files.find(path);
    if (it == files.end()) return HubError(404, "EntryNotFound", "Entry not found");
    if (it->second.size() < lfs_threshold) return Serve(r, it->second, {{"ETag", "\"small\""}});
    const std::string blob = "/blob/" + std::to_string(std::hash<std::string>()(repo + revision + path));
    blobs_[blob] = it->second;
    return {302,
            {{"Location", cdn_url() + blob + "?X-Amz-Signature=cdn-signed"},
             {"X-Linked-Size", std::to_string(it->second.size())},
             {"Content-Length", "0"}},
            ""};
  }
  if (api && verb == "revision") {
    return {200, {{"Content-Type", "application/json"}},
            "{\"id\": \"" + repo.substr(type_prefix.size()) + "\", \"sha\": \"" +
                std::string(40, 'a') + "\", \"private\": false}"};
  }
  if (api && verb == "tree") {
    if (throttle_tree > 0) {
      --throttle_tree;
      return {429, {{"Retry-After", "1"}}, "{\"error\": \"rate limited\"}"};
    }
    const std::string folder = path.empty() ? "" : path + "/";
    std::vector<std::string> entries;
    std::set<std::string> dirs;
    for (const auto& [p, bytes] : files) {
      if (p.compare(0, folder.size(), folder) != 0) continue;
      for (size_t s = p.find('/', folder.size()); s != std::string::npos; s = p.find('/', s + 1)) {
        if (dirs.insert(p.substr(0, s)).second) {
          entries.push_back("{\"type\": \"directory\", \"oid\": \"d\", \"path\": \"" +
                            p.substr(0, s) + "\"}");
        }
      }
      // A blob's oid changes with its bytes (the Hub's is their git hash).
      entries.push_back("{\"type\": \"file\", \"oid\": \"" + FakeHfHub::OidOf(bytes) +
                        "\", \"size\": " +
                        std::to_string(bytes.size()) + ", \"path\": \"" + p + "\"}");
    }
    if (!folder.empty() && entries.empty()) {
      return HubError(404, "EntryNotFound", path + " does not exist on \"" + revision + "\"");
    }
    size_t start = 0;
    if (size_t c = query.find("cursor="); c != std::string::npos) {
      start = std::stoull(query.substr(c + 7));
    }
    const size_t end = std::min(entries.size(), start + static_cast<size_t>(page_size.load()));
    std::string body = "[";
    for (size_t k = start; k < end; ++k) body += (k > start ? ", " : "") + entries[k];
    body += "]";
    ++tree_pages_;
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", "application/json"}};
    if (end < entries.size()) {
      std::string base_query = query.substr(0, query.find("&cursor="));
      headers.emplace_back("Link", "<" + url() + target + "?" + base_query +
                                       "&cursor=" + std::to_string(end) + ">; rel=\"next\"");
    }
    return {200, headers, body};
  }
  return HubError(404, "", "no such page");
}

}  // namespace sluice::testing

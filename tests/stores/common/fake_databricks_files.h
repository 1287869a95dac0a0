// FakeDatabricksFiles: a fake of the Databricks Files API (no real
// workspace can run here) for dbfs:/Volumes/... tests. It keeps files in
// memory, serves ranges, pages directory listings (immediate children,
// sorted) and demands the bearer token kToken.
#ifndef SLUICE_TESTS_STORES_COMMON_FAKE_DATABRICKS_FILES_H_
#define SLUICE_TESTS_STORES_COMMON_FAKE_DATABRICKS_FILES_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tests/stores/common/fake_http_server.h"

namespace sluice::testing {

class FakeDatabricksFiles {
 public:
  // The token the fake accepts (DATABRICKS_TOKEN).
  static constexpr char kToken[] = "dapi-secret-token-0001";

  FakeDatabricksFiles();
  std::string url() const { return server_.url(); }
  // CleanStoreEnv() with DATABRICKS_HOST (this fake) and DATABRICKS_TOKEN
  // (kToken): the environment a dbfs: test reads with.
  std::map<std::string, std::optional<std::string>> StoreEnv() const;

  // Accepts `token` as well (an OAuth token a test's token endpoint issued).
  // Thread-safe.
  void AcceptToken(const std::string& token);
  // The bearer tokens of the requests answered so far. Thread-safe.
  std::vector<std::string> bearers();
  // Per request answered, its X-Databricks-Azure-SP-Management-Token and
  // X-Databricks-Azure-Workspace-Resource-Id ("" when absent). Thread-safe.
  std::vector<std::string> management_tokens();
  std::vector<std::string> resource_ids();
  // GET /aad/auth redirects to this tenant's sign-in, as an Azure
  // workspace's does ("": 404, as elsewhere). Thread-safe.
  void SetAadTenant(const std::string& tenant);

  // POST /oidc/v1/token goes to `handler` (a test's token endpoint on the
  // workspace's host, as a runtime's token exchange needs); 404 when unset.
  // Set before requests arrive.
  void ServeTokenEndpoint(std::function<FakeResponse(const FakeRequest&)> handler);

  // Stores `bytes` at `path` ("/Volumes/..."), as a PUT would; each store
  // (this or a PUT) sets the file's last_modified, which listings give, to
  // a fake clock's next millisecond. Thread-safe.
  void Put(const std::string& path, std::string bytes);
  // The GETs of `path` answered so far (ranged ones included). Thread-safe.
  int gets(const std::string& path);
  // Directory listing pages answered so far. Thread-safe.
  int list_pages();
  // Listings of the folder `dir` ("/Volumes/...", decoded) answer 404, as
  // for a folder deleted while its parent was listed. Thread-safe.
  void FailListing(const std::string& dir);

  // Each directory listing waits this long (outside the lock, so that
  // listings in flight together overlap); the most seen at once.
  std::atomic<int> list_delay_ms{0};
  std::atomic<int> max_lists_in_flight{0};

 private:
  FakeResponse Handle(const FakeRequest& r);
  FakeResponse HandleLocked(const FakeRequest& r);

  std::atomic<int> lists_in_flight_{0};
  std::mutex mu_;
  std::map<std::string, std::string> files_;
  std::map<std::string, int64_t> modified_;  // last_modified, ms
  int64_t clock_ms_ = 1700000000000;
  std::map<std::string, int> gets_;
  std::set<std::string> accepted_ = {kToken};
  std::vector<std::string> bearers_;
  std::vector<std::string> management_tokens_, resource_ids_;
  std::string aad_tenant_;
  std::function<FakeResponse(const FakeRequest&)> token_endpoint_;
  int list_pages_ = 0;
  std::set<std::string> failing_listings_;
  FakeHttpServer server_;  // last: stops first
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_STORES_COMMON_FAKE_DATABRICKS_FILES_H_

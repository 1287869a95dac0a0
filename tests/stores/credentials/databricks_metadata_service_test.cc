// The Databricks SDK's metadata-service strategy
// (stores/credentials/databricks_metadata_service.h) against
// FakeMetadataService (below: a fake of the local service the VS Code
// extension runs, checking the headers the SDK sends) and
// FakeDatabricksFiles.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine/runtime/event_loop.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/credentials/shared_credential.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/credentials/databricks_volume_read.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::ReadsEmptyIndex;
using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::ScopedEnv;
using testing::TempDir;

// The service's key: the path of its URL, as the extension makes it.
constexpr char kMetadataKey[] = "/0c6a1f-metadata-key-secret";
constexpr char kMdsVolume[] = "dbfs:/Volumes/main/default/vol/ds";

// Answers GET <key> with X-Databricks-Metadata-Version: 1 and the
// workspace's X-Databricks-Host with the next token ("mds-token-N", told to
// `files`), expiring at `expires_on`; `answer` replaces the body when set.
class FakeMetadataService {
 public:
  FakeMetadataService() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url() + kMetadataKey; }
  std::string authority() const { return server_.url(); }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::string host;                // the workspace host the SDK names
  std::atomic<int64_t> expires_on{0};
  std::optional<std::string> answer;
  FakeDatabricksFiles* files = nullptr;

 private:
  FakeResponse Handle(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.method != "GET" || r.target != kMetadataKey) return {404, {}, ""};
    if (r.Header("x-databricks-metadata-version") != "1" || r.Header("x-databricks-host") != host) {
      return {400, {}, "{\"error\": \"bad headers\"}"};
    }
    if (answer) return {200, {{"Content-Type", "application/json"}}, *answer};
    const std::string token = "mds-token-" + std::to_string(++requests_);
    if (files != nullptr) files->AcceptToken(token);
    return {200, {{"Content-Type", "application/json"}},
            "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_on\": " +
                std::to_string(expires_on.load()) + "}"};
  }
  std::mutex mu_;
  int requests_ = 0;
  FakeHttpServer server_;
};

class DatabricksMetadataServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}");
    service_.files = &files_;
    service_.host = files_.url();
    service_.expires_on = static_cast<int64_t>(std::time(nullptr)) + 3600;
  }
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    env["DATABRICKS_CONFIG_FILE"] = dir_.path() + "/databrickscfg";
    env["DATABRICKS_HOST"] = files_.url();
    env["DATABRICKS_METADATA_SERVICE_URL"] = service_.url();
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }

  TempDir dir_{"databricks_metadata_service_test"};
  FakeDatabricksFiles files_;
  FakeMetadataService service_;
  EventLoop loop_;
  std::unique_ptr<ScopedEnv> env_;
};

TEST_F(DatabricksMetadataServiceTest, TheServicesTokenReadsAndWhoamiNamesNoKeyOrToken) {
  // DATABRICKS_OIDC_TOKEN is no setting of the config: env-oidc, later in
  // the order, would apply too.
  SetEnv({{"DATABRICKS_OIDC_TOKEN", "idtok-unused"}});
  std::unique_ptr<Store> store;  // held to the end, as the store was
  ASSERT_TRUE(ReadsEmptyIndex(kMdsVolume, loop_, &store));
  EXPECT_EQ(files_.bearers().back(), "mds-token-1");
  auto whoami = DescribeDbfsAuth(kMdsVolume);
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, std::string(kMdsVolume) + "\n"
                     "  host: " + files_.url() + " (from DATABRICKS_HOST)\n"
                     "  credentials: the metadata service " + service_.authority() +
                     " (from DATABRICKS_METADATA_SERVICE_URL) (bearer token)\n"
                     "  expires: " + std::to_string(service_.expires_on.load()) + " (unix time)\n"
                     "  sources tried: pat (no token (DATABRICKS_TOKEN)), basic (no user name and password "
                     "(DATABRICKS_USERNAME)), metadata-service (used)\n");
  EXPECT_EQ(whoami->find(kMetadataKey), std::string::npos);
  EXPECT_EQ(whoami->find("mds-token"), std::string::npos);
}

TEST_F(DatabricksMetadataServiceTest, ItsTokenIsAskedForAgainAheadOfItsExpiry) {
  SetEnv({});
  int64_t now = 1'000'000;
  service_.expires_on = now + 600;
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  SharedCredentialOptions options;
  options.clock = [&now] { return now; };
  options.background = false;
  SharedCredential credential(MakeDatabricksCredentialChain(*config), options);
  auto first = credential.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->bearer, "mds-token-1");
  EXPECT_EQ(first->expires_at, now + 600);
  now += 200;  // 400 s left: outside the 300 s refresh window
  EXPECT_FALSE(credential.RefreshIfDue());
  now += 150;  // 250 s left
  service_.expires_on = now + 600;
  EXPECT_TRUE(credential.RefreshIfDue());
  auto second = credential.Get();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->bearer, "mds-token-2");
  EXPECT_EQ(second->expires_at, now + 600);
  EXPECT_EQ(service_.requests(), 2);
}

TEST_F(DatabricksMetadataServiceTest, BrokenAnswersSayWhatIsWrongAndNeverTheKeyOrToken) {
  const std::string where = "the metadata service " + service_.authority() +
                            " (from DATABRICKS_METADATA_SERVICE_URL)";
  const std::string prefix = "Databricks credentials: metadata-service: ";
  const std::map<std::string, std::string> cases = {
      {"{\"token_type\": \"Bearer\", \"expires_on\": 1}", where + " returned empty token"},
      {"{\"access_token\": \"mds-secret-1\", \"expires_on\": 1}", where + " returned empty token type"},
      {"{\"access_token\": \"mds-secret-1\", \"token_type\": \"Bearer\", \"expires_on\": \"\"}",
       where + " returned invalid expiry"},
      {"{\"access_token\": \"mds-secret-1\", \"token_type\": \"Bearer\"}", where + " returned invalid expiry"},
      {"{\"access_token\": \"mds-secret-1\", \"token_type\": \"MAC\", \"expires_on\": 1}",
       where + " returned a token of type 'MAC'; Sluice sends Bearer tokens only"},
      {"not json mds-secret-1", where + " answered with no JSON"},
  };
  for (const auto& [answer, want] : cases) {
    service_.answer = answer;
    SetEnv({});
    auto config = LoadDatabricksConfig();
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto got = MakeDatabricksCredentialChain(*config)->Fetch(1'000'000);
    EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << answer;
    EXPECT_NE(got.status().message().find(want), std::string::npos) << got.status().message();
    EXPECT_EQ(got.status().message().find("mds-secret"), std::string::npos);
    EXPECT_EQ(got.status().message().find(kMetadataKey), std::string::npos);
  }
  // The service refuses (another workspace's host), or nothing listens.
  service_.answer.reset();
  service_.host = "https://other.cloud.databricks.com";
  SetEnv({});
  auto refused = OpenStore(kMdsVolume, loop_.executor());
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find(where + " failed: "), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find(kMetadataKey), std::string::npos) << refused.status().message();
  SetEnv({{"DATABRICKS_METADATA_SERVICE_URL", "http://127.0.0.1:1" + std::string(kMetadataKey)}});
  auto unreachable = OpenStore(kMdsVolume, loop_.executor());
  EXPECT_NE(unreachable.status().message().find(
                "the metadata service http://127.0.0.1:1 (from DATABRICKS_METADATA_SERVICE_URL) failed: "),
            std::string::npos)
      << unreachable.status().message();
  EXPECT_EQ(unreachable.status().message().find(kMetadataKey), std::string::npos)
      << unreachable.status().message();
}

TEST_F(DatabricksMetadataServiceTest, ItIsAKindOfItsOwnAndNeedsAHost) {
  SetEnv({{"DATABRICKS_TOKEN", FakeDatabricksFiles::kToken}});
  EXPECT_EQ(LoadDatabricksConfig().status().message(),
            "validate: more than one authorization method configured: metadata-service and pat (set "
            "DATABRICKS_AUTH_TYPE to choose one)");
  SetEnv({{"DATABRICKS_TOKEN", FakeDatabricksFiles::kToken}, {"DATABRICKS_AUTH_TYPE", "metadata-service"}});
  auto chosen = LoadDatabricksConfig();
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  auto got = MakeDatabricksCredentialChain(*chosen)->Fetch(1'000'000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "mds-token-1");
  SetEnv({{"DATABRICKS_HOST", std::nullopt}});
  auto no_host = LoadDatabricksConfig();
  ASSERT_TRUE(no_host.ok()) << no_host.status().ToString();
  auto none = MakeDatabricksCredentialChain(*no_host)->Fetch(1'000'000);
  EXPECT_NE(none.status().message().find("metadata-service (a metadata service but no host (DATABRICKS_HOST))"),
            std::string::npos)
      << none.status().message();
}

}  // namespace
}  // namespace sluice

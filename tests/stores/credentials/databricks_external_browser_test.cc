// external-browser (stores/credentials/databricks_external_browser.h): tried
// only when chosen; the Python SDK's cached login (its file named as the SDK
// names it) read through dbfs:/Volumes against FakeDatabricksFiles, its
// refresh token exchanged at a fake token endpoint that checks the form
// field by field, and what it says where the SDK would open a browser.
#include <gtest/gtest.h>

#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/credentials/databricks_external_browser.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/signing/digest.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/form_fields.h"

namespace sluice {
namespace {

using testing::FakeDatabricksFiles;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::FormFields;
using testing::ScopedEnv;
using testing::TempDir;

// OIDC discovery and a token endpoint that takes only the refresh token
// "rt-cached" of the client databricks-cli: each answer is "browser-<n>".
class FakeRefresh {
 public:
  FakeRefresh() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string discovery() const { return server_.url() + "/oidc/.well-known/oauth-authorization-server"; }
  FakeDatabricksFiles* files = nullptr;
  int refreshes() {
    std::lock_guard<std::mutex> lock(mu_);
    return refreshes_;
  }

 private:
  FakeResponse Handle(const FakeRequest& r) {
    const std::vector<std::pair<std::string, std::string>> json = {{"Content-Type", "application/json"}};
    if (r.method == "GET" && r.target == "/oidc/.well-known/oauth-authorization-server") {
      return {200, json, "{\"token_endpoint\": \"" + server_.url() + "/oidc/v1/token\"}"};
    }
    if (r.method != "POST" || r.target != "/oidc/v1/token") return {404, {}, ""};
    const std::map<std::string, std::string> want = {
        {"grant_type", "refresh_token"}, {"refresh_token", "rt-cached"}, {"client_id", "databricks-cli"}};
    if (FormFields(r.body) != want) return {400, json, "{\"error\": \"invalid_grant\"}"};
    std::lock_guard<std::mutex> lock(mu_);
    const std::string token = "browser-" + std::to_string(++refreshes_);
    if (files != nullptr) files->AcceptToken(token);
    return {200, json, "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_in\": 3600}"};
  }
  std::mutex mu_;
  int refreshes_ = 0;
  FakeHttpServer server_;
};

class DatabricksExternalBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}");
    refresh_.files = &files_;
    SetEnv({});
  }
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = testing::CleanStoreEnv();
    env["HOME"] = dir_.path();
    env["DATABRICKS_HOST"] = files_.url();
    env["DATABRICKS_AUTH_TYPE"] = "external-browser";
    env["DATABRICKS_DISCOVERY_URL"] = refresh_.discovery();
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  // The cache file the SDK would write for the environment as set.
  std::string CachePath() {
    auto config = LoadDatabricksConfig();
    EXPECT_TRUE(config.ok());
    return DatabricksSdkTokenCachePath(*config);
  }
  void WriteCache(const std::string& token_json) {
    const std::string path = CachePath();
    ASSERT_TRUE(MakeDirs(path.substr(0, path.rfind('/'))).ok());
    ASSERT_TRUE(WriteFileAtomic(path, "{\"token\": " + token_json + "}").ok());
  }
  Result<Credential> Fetch() {
    auto config = LoadDatabricksConfig();
    if (!config.ok()) return config.status();
    return MakeDatabricksCredentialChain(*config)->Fetch(static_cast<int64_t>(std::time(nullptr)));
  }

  TempDir dir_{"databricks_external_browser_test"};
  FakeDatabricksFiles files_;
  FakeRefresh refresh_;
  EventLoop loop_;
  std::unique_ptr<ScopedEnv> env_;
};

// The file's name: SHA-256 of json.dumps of the client, host, profile and
// scopes (sorted, then offline_access), sort_keys, as databricks-sdk 0.162.0.
TEST_F(DatabricksExternalBrowserTest, TheCacheIsTheFileTheSdkNames) {
  EXPECT_EQ(CachePath(), dir_.path() + "/.config/databricks-sdk-py/oauth/" +
                             Sha256Hex("{\"client_id\": \"databricks-cli\", \"host\": \"" + files_.url() +
                                              "\", \"profile\": \"\", \"scopes\": [\"all-apis\", "
                                              "\"offline_access\"]}") +
                             ".json");
  SetEnv({{"DATABRICKS_DISABLE_OAUTH_REFRESH_TOKEN", "false"}, {"DATABRICKS_GROUP_ID", "g-1"}});
  EXPECT_EQ(CachePath(), dir_.path() + "/.config/databricks-sdk-py/oauth/" +
                             Sha256Hex("{\"client_id\": \"databricks-cli\", \"group_id\": \"g-1\", \"host\": \"" +
                                              files_.url() + "\", \"profile\": \"\", \"scopes\": [\"all-apis\"]}") +
                             ".json");
}

// A fresh cached token is the bearer until its expiry; an expired one is
// refreshed with the cache's refresh token; the read sends the new one.
TEST_F(DatabricksExternalBrowserTest, TheCachedLoginReadsAndIsRefreshed) {
  WriteCache("{\"access_token\": \"cached-fresh\", \"token_type\": \"Bearer\", "
             "\"expiry\": \"2099-01-01T00:00:00+00:00\", \"refresh_token\": \"rt-cached\"}");
  auto fresh = Fetch();
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->bearer, "cached-fresh");
  EXPECT_EQ(fresh->expires_at, std::optional<int64_t>(4070908800));
  EXPECT_EQ(fresh->source, "the Databricks Python SDK's browser login of client databricks-cli (" + CachePath() + ")");
  EXPECT_EQ(refresh_.refreshes(), 0);

  WriteCache("{\"access_token\": \"cached-stale\", \"token_type\": \"Bearer\", "
             "\"expiry\": \"2001-01-01T00:00:00\", \"refresh_token\": \"rt-cached\"}");
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  // (The host metadata probe, /.well-known/databricks-config, asks the
  // Files fake too, with no bearer.)
  EXPECT_EQ(files_.bearers().back(), "browser-1");
  EXPECT_EQ(refresh_.refreshes(), 1);
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_NE(whoami->find("  credentials: the Databricks Python SDK's browser login of client databricks-cli"),
            std::string::npos)
      << *whoami;
  EXPECT_EQ(whoami->find("rt-cached"), std::string::npos) << *whoami;
}

// Where the SDK would open a browser, Sluice says what to do; not chosen,
// the strategy is passed over.
TEST_F(DatabricksExternalBrowserTest, WhereTheSdkWouldOpenABrowserItSaysWhatToDo) {
  const std::string login = "; Sluice opens no browser: run `databricks auth login --host " + files_.url() +
                            "` and set DATABRICKS_AUTH_TYPE=databricks-cli";
  auto none = Fetch();
  EXPECT_EQ(none.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(none.status().message(),
            "external-browser: no login of the Databricks Python SDK is cached in " + CachePath() + login);
  WriteCache("{\"access_token\": \"cached-stale\", \"expiry\": \"2001-01-01T00:00:00\"}");
  EXPECT_EQ(Fetch().status().message(),
            "external-browser: the login cached in " + CachePath() + " has expired and has no refresh token" + login);
  WriteCache("{\"access_token\": \"cached-stale\", \"expiry\": \"2001-01-01T00:00:00\", "
             "\"refresh_token\": \"rt-revoked\"}");
  const std::string refused = Fetch().status().message();
  EXPECT_EQ(refused.rfind("external-browser: refresh of the login cached in " + CachePath() + " to ", 0), 0u)
      << refused;
  EXPECT_NE(refused.find("(invalid_grant)"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("rt-revoked"), std::string::npos) << refused;
  SetEnv({{"DATABRICKS_AUTH_TYPE", std::nullopt}, {"DATABRICKS_TOKEN", "dapi-x"}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  auto chain = MakeDatabricksCredentialChain(*config);
  ASSERT_TRUE(chain->Fetch(1000).ok());
  EXPECT_EQ(chain->DescribeAttempts(), "pat (used)");
}

}  // namespace
}  // namespace sluice

// Databricks unified authentication (stores/credentials/databricks_config.h,
// databricks_credential.h) and dbfs:/Volumes reads through it, against
// FakeDatabricksOidc (below: a fake of a workspace's OIDC discovery and
// token endpoints, as no workspace can run here) and FakeDatabricksFiles.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "engine/runtime/event_loop.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/databricks_credential.h"
#include "stores/credentials/databricks_runtime_token.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/signing/digest.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kClientId[] = "sp-client-1";
constexpr char kClientSecret[] = "dose-secret-value-42";

// OIDC discovery and the client_credentials grant, checking what the real
// endpoint checks: Basic auth of the client, the grant and the scope.
class FakeDatabricksOidc {
 public:
  FakeDatabricksOidc() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }
  int token_requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return token_requests_;
  }
  std::atomic<int> expires_in{3600};
  std::atomic<int> metadata_requests{0};
  FakeDatabricksFiles* files = nullptr;  // told every token issued

 private:
  FakeResponse Handle(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.method == "GET" && r.target == "/.well-known/databricks-config") {
      ++metadata_requests;
      return {200, {{"Content-Type", "application/json"}},
              "{\"oidc_endpoint\": \"" + url() + "/oidc\", \"workspace_id\": \"123\"}"};
    }
    if (r.method == "GET" && r.target == "/oidc/.well-known/oauth-authorization-server") {
      return {200, {{"Content-Type", "application/json"}},
              "{\"issuer\": \"" + url() + "/oidc\", \"token_endpoint\": \"" + url() +
                  "/oidc/v1/token\", \"authorization_endpoint\": \"" + url() +
                  "/oidc/v1/authorize\"}"};
    }
    if (r.method == "POST" && r.target == "/oidc/v1/token") {
      std::string decoded;
      const std::string auth = r.Header("authorization");
      if (auth.rfind("Basic ", 0) != 0 || !Base64Decode(auth.substr(6), &decoded) ||
          decoded != std::string(kClientId) + ":" + kClientSecret) {
        return {401, {{"Content-Type", "application/json"}},
                "{\"error\": \"invalid_client\", \"error_description\": \"Client authentication failed\"}"};
      }
      if (r.body != "grant_type=client_credentials&scope=all-apis") {
        return {400, {{"Content-Type", "application/json"}}, "{\"error\": \"invalid_request\"}"};
      }
      const std::string token = "m2m-token-" + std::to_string(++token_requests_);
      if (files != nullptr) files->AcceptToken(token);
      return {200, {{"Content-Type", "application/json"}},
              "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_in\": " +
                  std::to_string(expires_in.load()) + ", \"scope\": \"all-apis\"}"};
    }
    return {404, {}, ""};
  }
  std::mutex mu_;
  int token_requests_ = 0;
  FakeHttpServer server_;
};

constexpr char kDatabricksAzureClient[] = "0f5c2a1e-azure-sp";
constexpr char kDatabricksAzureSecret[] = "entra-secret-value-7";
constexpr char kDatabricksTenant[] = "72f988bf-tenant";

// Microsoft Entra ID's v1 token endpoint for a client secret, checking the
// form the SDK posts (the client's id and secret in it, a resource, the
// all-apis scope); answers expires_in as a string, as v1 does. A token
// names its resource: "entra-workspace-N" for the Azure Databricks
// application, "entra-management-N" for the service-management endpoint.
class FakeDatabricksEntra {
 public:
  FakeDatabricksEntra() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }
  FakeDatabricksFiles* files = nullptr;  // told every workspace token issued
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  FakeResponse Handle(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.method != "POST" || r.target != std::string("/") + kDatabricksTenant + "/oauth2/token") return {404, {}, ""};
    ++requests_;
    const std::string form = "grant_type=client_credentials&scope=all-apis&resource=";
    const std::string client = std::string("&client_id=") + kDatabricksAzureClient + "&client_secret=";
    std::string kind;
    if (r.body.rfind(form + "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d" + client, 0) == 0) kind = "workspace";
    if (r.body.rfind(form + "https%3A%2F%2Fmanagement.core.windows.net%2F" + client, 0) == 0) kind = "management";
    if (kind.empty()) return {400, {{"Content-Type", "application/json"}}, "{\"error\": \"invalid_request\"}"};
    if (!r.body.ends_with(std::string("&client_secret=") + kDatabricksAzureSecret)) {
      return {401, {{"Content-Type", "application/json"}},
              "{\"error\": \"invalid_client\", \"error_description\": \"AADSTS7000215: Invalid client secret "
              "provided.\"}"};
    }
    const std::string token = "entra-" + kind + "-" + std::to_string(requests_);
    if (files != nullptr && kind == "workspace") files->AcceptToken(token);
    return {200, {{"Content-Type", "application/json"}},
            "{\"token_type\": \"Bearer\", \"expires_in\": \"3599\", \"access_token\": \"" + token + "\"}"};
  }
  std::mutex mu_;
  int requests_ = 0;
  FakeHttpServer server_;
};

class DatabricksAuthTest : public ::testing::Test {
 protected:
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    env["DATABRICKS_CONFIG_FILE"] = cfg_;
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  void WriteCfg(const std::string& text) { ASSERT_TRUE(WriteFileAtomic(cfg_, text).ok()); }

  TempDir dir_{"databricks_auth_test"};
  std::string cfg_ = dir_.path() + "/databrickscfg";
  std::unique_ptr<ScopedEnv> env_;
};

TEST_F(DatabricksAuthTest, ProfilesResolveAsTheSdkDoes) {
  WriteCfg(
      "[DEFAULT]\nhost = https://default.cloud.databricks.com/\ntoken = dapi-default\n\n"
      "[sp]\nhost = adb-1.2.azuredatabricks.net\nclient_id = " + std::string(kClientId) +
      "\nclient_secret = " + kClientSecret + "\n\n[other]\nhost = https://other.example\n");
  // [DEFAULT] when nothing else is set.
  SetEnv({});
  auto c = LoadDatabricksConfig();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "https://default.cloud.databricks.com");
  EXPECT_EQ(c->token, "dapi-default");
  EXPECT_EQ(c->profile, "DEFAULT");
  EXPECT_EQ(c->origin["token"], "profile DEFAULT of " + cfg_);
  // A named profile; a bare host gets https://.
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "sp"}});
  c = LoadDatabricksConfig();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->host, "https://adb-1.2.azuredatabricks.net");
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->client_id, kClientId);
  // The environment's values win over the profile's.
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "other"}, {"DATABRICKS_TOKEN", "dapi-env"}});
  c = LoadDatabricksConfig();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "https://other.example");
  EXPECT_EQ(c->token, "dapi-env");
  EXPECT_EQ(c->origin["token"], "DATABRICKS_TOKEN");
  EXPECT_EQ(c->origin["host"], "profile other of " + cfg_);
  // A host or credential in the environment and no profile named: the file
  // is not read.
  SetEnv({{"DATABRICKS_HOST", "https://env.example"}});
  c = LoadDatabricksConfig();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->profile, "");
  // [__settings__] default_profile.
  WriteCfg("[__settings__]\ndefault_profile = other\n\n[other]\nhost = https://other.example\n"
           "token = dapi-other\n");
  SetEnv({});
  c = LoadDatabricksConfig();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->profile, "other");
  EXPECT_EQ(c->token, "dapi-other");
  // A named profile the file lacks.
  SetEnv({{"DATABRICKS_CONFIG_PROFILE", "nope"}});
  EXPECT_EQ(LoadDatabricksConfig().status().message(),
            "resolve: " + cfg_ + " has no nope profile configured");
  // Two kinds of credentials without DATABRICKS_AUTH_TYPE.
  SetEnv({{"DATABRICKS_HOST", "h"}, {"DATABRICKS_TOKEN", "dapi-x"},
          {"DATABRICKS_CLIENT_ID", kClientId}, {"DATABRICKS_CLIENT_SECRET", kClientSecret}});
  auto two = LoadDatabricksConfig();
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(two.status().message(),
            "validate: more than one authorization method configured: oauth and pat (set "
            "DATABRICKS_AUTH_TYPE to choose one)");
  SetEnv({{"DATABRICKS_HOST", "h"}, {"DATABRICKS_AUTH_TYPE", "oauth-u2m"}});
  EXPECT_EQ(LoadDatabricksConfig().status().message(),
            "the Databricks auth type 'oauth-u2m' (from DATABRICKS_AUTH_TYPE) is not supported; "
            "Sluice has pat, basic, metadata-service, oauth-m2m, env-oidc, file-oidc, github-oidc, azure-client-secret, "
            "github-oidc-azure, azure-cli, azure-devops-oidc, external-browser, databricks-cli, runtime-oauth, runtime, "
            "google-credentials, google-id and model-serving");
}

TEST_F(DatabricksAuthTest, OAuthM2mDiscoversTheTokenEndpointOfTheHost) {
  FakeDatabricksOidc oidc;
  oidc.expires_in = 1800;
  SetEnv({{"DATABRICKS_HOST", oidc.url()}, {"DATABRICKS_CLIENT_ID", kClientId},
          {"DATABRICKS_CLIENT_SECRET", kClientSecret}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  auto chain = MakeDatabricksCredentialChain(*config);
  auto got = chain->Fetch(1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "m2m-token-1");
  EXPECT_EQ(got->expires_at, 2800);
  EXPECT_EQ(got->source, "OAuth M2M for client sp-client-1 (from DATABRICKS_CLIENT_ID)");
  EXPECT_EQ(oidc.metadata_requests.load(), 1);  // the host's metadata named its OIDC root
  EXPECT_EQ(chain->DescribeAttempts(),
            "pat (no token (DATABRICKS_TOKEN)), basic (no user name and password "
            "(DATABRICKS_USERNAME)), metadata-service (no metadata service (DATABRICKS_METADATA_SERVICE_URL)), "
            "oauth-m2m (used)");
  // With both kinds, DATABRICKS_AUTH_TYPE picks one.
  SetEnv({{"DATABRICKS_HOST", oidc.url()}, {"DATABRICKS_TOKEN", "dapi-x"},
          {"DATABRICKS_CLIENT_ID", kClientId}, {"DATABRICKS_CLIENT_SECRET", kClientSecret},
          {"DATABRICKS_AUTH_TYPE", "oauth-m2m"}});
  config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  got = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bearer, "m2m-token-2");
  // A wrong secret: the endpoint's error code, never the secret.
  SetEnv({{"DATABRICKS_HOST", oidc.url()}, {"DATABRICKS_CLIENT_ID", kClientId},
          {"DATABRICKS_CLIENT_SECRET", "wrong-secret-value"}});
  config = LoadDatabricksConfig();
  auto refused = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("oauth-m2m: token request for client sp-client-1 to " +
                                            oidc.url() + "/oidc/v1/token failed"),
            std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("invalid_client"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find("wrong-secret-value"), std::string::npos);
}

class DatabricksReadTest : public DatabricksAuthTest {
 protected:
  void SetUp() override {
    files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}");
    oidc_.files = &files_;
  }
  FakeDatabricksFiles files_;
  FakeDatabricksOidc oidc_;
  EventLoop loop_;
};

TEST_F(DatabricksReadTest, AProfilesTokenReadsAndWhoamiNamesIt) {
  WriteCfg("[DEFAULT]\nhost = " + files_.url() + "\ntoken = " + FakeDatabricksFiles::kToken + "\n");
  SetEnv({});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "dbfs:/Volumes/main/default/vol/ds\n"
                     "  host: " + files_.url() + " (from profile DEFAULT of " + cfg_ + ")\n"
                     "  profile: DEFAULT of " + cfg_ + "\n"
                     "  credentials: personal access token from profile DEFAULT of " + cfg_ +
                     " (bearer token)\n"
                     "  sources tried: pat (used)\n");
}

TEST_F(DatabricksReadTest, AServicePrincipalsTokenReadsAndIsRefreshedBeforeItExpires) {
  oidc_.expires_in = 4;  // refreshed at half its life
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"DATABRICKS_CLIENT_ID", kClientId},
          {"DATABRICKS_CLIENT_SECRET", kClientSecret},
          {"DATABRICKS_DISCOVERY_URL", oidc_.url() + "/oidc/.well-known/oauth-authorization-server"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  EXPECT_EQ(files_.bearers().back(), "m2m-token-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  auto again = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_GE(oidc_.token_requests(), 2);
  EXPECT_NE(files_.bearers().back(), "m2m-token-1");
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_NE(whoami->find("  credentials: OAuth M2M for client sp-client-1 (from "
                         "DATABRICKS_CLIENT_ID) (bearer token)\n"),
            std::string::npos)
      << *whoami;
  EXPECT_EQ(whoami->find(kClientSecret), std::string::npos);
  EXPECT_EQ(whoami->find("m2m-token"), std::string::npos);
}

// An Azure service principal (ARM_*) of an Azure workspace: the tenant
// from the workspace's sign-in redirect, two Entra ID tokens (the
// workspace's as the bearer, the management one in its header), the
// resource id header when configured; whoami names client and tenant, never
// a secret or a token. A host that is not an Azure workspace, a wrong
// secret and a host with no sign-in redirect are errors that say so.
TEST_F(DatabricksReadTest, AnAzureServicePrincipalReadsWithBothTokens) {
  FakeDatabricksEntra entra;
  entra.files = &files_;
  files_.SetAadTenant(kDatabricksTenant);
  const std::string resource = "/subscriptions/s1/resourceGroups/g/providers/Microsoft.Databricks/workspaces/w";
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"ARM_CLIENT_ID", kDatabricksAzureClient}, {"ARM_CLIENT_SECRET", kDatabricksAzureSecret},
          {"DATABRICKS_AZURE_RESOURCE_ID", resource}, {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", entra.url()}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  EXPECT_EQ(files_.bearers().back(), "entra-workspace-1");
  EXPECT_EQ(files_.management_tokens().back(), "entra-management-2");
  EXPECT_EQ(files_.resource_ids().back(), resource);
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_NE(whoami->find("  credentials: Azure service principal 0f5c2a1e-azure-sp of tenant 72f988bf-tenant (from "
                         "ARM_CLIENT_ID) (bearer token)\n"),
            std::string::npos)
      << *whoami;
  EXPECT_NE(whoami->find("azure-client-secret (used)"), std::string::npos) << *whoami;
  for (const char* secret : {kDatabricksAzureSecret, "entra-workspace", "entra-management"}) {
    EXPECT_EQ(whoami->find(secret), std::string::npos) << secret;
  }

  // ARM_TENANT_ID spares the discovery; DATABRICKS_AUTH_TYPE picks the
  // strategy beside a token.
  files_.SetAadTenant("");
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"ARM_CLIENT_ID", kDatabricksAzureClient}, {"ARM_CLIENT_SECRET", kDatabricksAzureSecret},
          {"ARM_TENANT_ID", kDatabricksTenant}, {"DATABRICKS_TOKEN", "dapi-x"}, {"DATABRICKS_AUTH_TYPE", "azure-client-secret"},
          {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", entra.url()}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto credential = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->bearer, "entra-workspace-3");
  EXPECT_EQ(credential->expires_at, 1000 + 3599);
  ASSERT_EQ(credential->headers.size(), 1u);  // no resource id configured
  EXPECT_EQ(credential->headers[0].first, "x-databricks-azure-sp-management-token");
  // Without DATABRICKS_AUTH_TYPE, a token and Azure credentials are two kinds.
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"ARM_CLIENT_ID", kDatabricksAzureClient}, {"DATABRICKS_TOKEN", "dapi-x"}});
  EXPECT_EQ(LoadDatabricksConfig().status().message(),
            "validate: more than one authorization method configured: azure and pat (set DATABRICKS_AUTH_TYPE to "
            "choose one)");

  auto error = [&](std::map<std::string, std::optional<std::string>> env) {
    env["DATABRICKS_HOST"] = files_.url();
    env["ARM_CLIENT_ID"] = kDatabricksAzureClient;
    if (!env.count("ARM_CLIENT_SECRET")) env["ARM_CLIENT_SECRET"] = kDatabricksAzureSecret;
    SetEnv(env);
    auto c = LoadDatabricksConfig();
    EXPECT_TRUE(c.ok());
    auto fetched = MakeDatabricksCredentialChain(*c)->Fetch(1000);
    EXPECT_FALSE(fetched.ok());
    EXPECT_EQ(fetched.status().message().find(kDatabricksAzureSecret), std::string::npos);
    return fetched.status().message();
  };
  const std::string tried = " (tried before: pat (no token (DATABRICKS_TOKEN)), basic (no user name and password "
                            "(DATABRICKS_USERNAME)), metadata-service (no metadata service (DATABRICKS_METADATA_SERVICE_URL)), "
            "oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), env-oidc (no ID "
                            "token in DATABRICKS_OIDC_TOKEN), file-oidc (no ID token file "
                            "(DATABRICKS_OIDC_TOKEN_FILEPATH)), github-oidc (no client id (DATABRICKS_CLIENT_ID)))";
  EXPECT_EQ(error({}), "azure-client-secret: an Azure service principal (from ARM_CLIENT_ID) signs in to an Azure "
                       "Databricks workspace, and " + files_.url() + " is not one (*.azuredatabricks.net, "
                       "*.databricks.azure.us, *.databricks.azure.cn)" + tried);
  EXPECT_EQ(error({{"SLUICE_DATABRICKS_ENTRA_ENDPOINT", entra.url()}}),
            "azure-client-secret: the Azure tenant of " + files_.url() + " is unknown: set ARM_TENANT_ID (" +
                "GET " + files_.url() + "/aad/auth: HTTP 404 Not Found, expected 2xx)" + tried);
  const std::string wrong = error({{"SLUICE_DATABRICKS_ENTRA_ENDPOINT", entra.url()}, {"ARM_TENANT_ID", kDatabricksTenant},
                                   {"ARM_CLIENT_SECRET", "wrong-secret"}});
  EXPECT_NE(wrong.find("Entra ID token request for Azure client 0f5c2a1e-azure-sp (resource "
                       "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d) to " + entra.url() + "/" + kDatabricksTenant +
                       "/oauth2/token failed"),
            std::string::npos)
      << wrong;
  EXPECT_NE(wrong.find("HTTP 401 Unauthorized (invalid_client)"), std::string::npos) << wrong;
  EXPECT_EQ(wrong.find("wrong-secret"), std::string::npos) << wrong;
}

TEST_F(DatabricksReadTest, NoCredentialSaysWhatToSet) {
  SetEnv({{"DATABRICKS_HOST", files_.url()}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  EXPECT_EQ(store.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store.status().message(),
            "no Databricks credentials for dbfs:/Volumes/main/default/vol/ds: set "
            "DATABRICKS_TOKEN, or DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET, or use a "
            "profile of ~/.databrickscfg that has them (no Databricks credentials found; tried: "
            "pat (no token (DATABRICKS_TOKEN)), basic (no user name and password "
            "(DATABRICKS_USERNAME)), metadata-service (no metadata service (DATABRICKS_METADATA_SERVICE_URL)), "
            "oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), env-oidc (no ID token in "
            "DATABRICKS_OIDC_TOKEN), file-oidc (no ID token file (DATABRICKS_OIDC_TOKEN_FILEPATH)), github-oidc (no "
            "client id (DATABRICKS_CLIENT_ID)), azure-client-secret (no Azure client id (ARM_CLIENT_ID)), "
            "github-oidc-azure (no Azure client id (ARM_CLIENT_ID)), azure-cli (" +
                files_.url() + " is not an Azure Databricks workspace), azure-devops-oidc (no client id "
                "(DATABRICKS_CLIENT_ID)), external-browser (only when chosen "
                "(DATABRICKS_AUTH_TYPE=external-browser)), databricks-cli ('/nonexistent/databricks' not "
                "found (from DATABRICKS_CLI_PATH) (the Databricks CLI is not installed)), runtime-oauth (not in a "
                "Databricks runtime "
                "(DATABRICKS_RUNTIME_VERSION is not set)), runtime (not in a Databricks runtime "
                "(DATABRICKS_RUNTIME_VERSION is not set)), google-credentials (no service-account key "
                "(GOOGLE_CREDENTIALS)), google-id (no service account to impersonate "
                "(DATABRICKS_GOOGLE_SERVICE_ACCOUNT)), model-serving (not in Databricks Model Serving "
                "(IS_IN_DB_MODEL_SERVING_ENV is not \"true\")))");
  SetEnv({});
  EXPECT_EQ(OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor()).status().message(),
            "no Databricks workspace for dbfs:/Volumes/main/default/vol/ds: set DATABRICKS_HOST, "
            "or a host in a profile of ~/.databrickscfg (DATABRICKS_CONFIG_FILE)");
}

// The runtime strategy: a binding's provider hands over the runtime's host
// and token. With no host configured the runtime's is used; the token is
// the bearer of every request, asked for again (expiry unknown) before
// kDatabricksRuntimeTokenRecheckS pass.
class DatabricksRuntimeTest : public DatabricksReadTest {
 protected:
  void TearDown() override { SetDatabricksRuntimeTokenProvider(nullptr); }
  void Provide(std::string host, std::string token) {
    SetDatabricksRuntimeTokenProvider([this, host, token]() -> Result<DatabricksRuntimeToken> {
      ++calls_;
      return DatabricksRuntimeToken{host, token, std::nullopt};
    });
  }
  // The expiry of the shared credential the store uses (the config with the
  // runtime's host, as FindDbfsAuth makes it).
  static int64_t RuntimeExpiry() {
    DatabricksConfig config = LoadDatabricksConfig().value();
    EXPECT_TRUE(FillDatabricksRuntimeHost(&config).ok());
    return DatabricksSharedCredential(config)->Get()->expires_at.value();
  }
  std::atomic<int> calls_{0};
};

TEST_F(DatabricksRuntimeTest, TheRuntimesTokenReadsWithTheRuntimesHost) {
  files_.AcceptToken("runtime-token-7");
  Provide(files_.url() + "/", "runtime-token-7");
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  EXPECT_EQ(files_.bearers(), std::vector<std::string>{"runtime-token-7"});
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_EQ(*whoami, "dbfs:/Volumes/main/default/vol/ds\n"
                     "  host: " + files_.url() + " (from the Databricks runtime)\n"
                     "  credentials: the Databricks runtime's token for " + files_.url() +
                     " (bearer token)\n"
                     "  expires: " + std::to_string(RuntimeExpiry()) + " (unix time)\n"
                     "  sources tried: pat (no token (DATABRICKS_TOKEN)), basic (no user name and "
                     "password (DATABRICKS_USERNAME)), metadata-service (no metadata service "
                     "(DATABRICKS_METADATA_SERVICE_URL)), oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), "
                     "env-oidc (no ID token in DATABRICKS_OIDC_TOKEN), file-oidc (no ID token file "
                     "(DATABRICKS_OIDC_TOKEN_FILEPATH)), github-oidc (no client id (DATABRICKS_CLIENT_ID)), "
                     "azure-client-secret (no Azure client id (ARM_CLIENT_ID)), github-oidc-azure (no Azure "
                     "client id (ARM_CLIENT_ID)), azure-cli (" + files_.url() +
                     " is not an Azure Databricks workspace), azure-devops-oidc (no client id "
                     "(DATABRICKS_CLIENT_ID)), external-browser (only when chosen "
                     "(DATABRICKS_AUTH_TYPE=external-browser)), "
                     "databricks-cli ('/nonexistent/databricks' not found (from DATABRICKS_CLI_PATH) (the "
                     "Databricks CLI is not installed)), "
                     "runtime-oauth (in a Databricks runtime, but no OAuth scopes are configured (scopes in "
                     "the profile), so the runtime's token is not exchanged), "
                     "runtime (used)\n");
}

TEST_F(DatabricksRuntimeTest, AnUnknownExpiryIsAskedAgainAfterTheRecheckInterval) {
  Provide(files_.url(), "runtime-token-8");
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_AUTH_TYPE", "runtime"}});
  auto chain = MakeDatabricksCredentialChain(LoadDatabricksConfig().value());
  auto got = chain->Fetch(1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bearer, "runtime-token-8");
  EXPECT_EQ(got->expires_at, 1000 + kDatabricksRuntimeTokenRecheckS);
  EXPECT_EQ(got->source, "the Databricks runtime's token for " + files_.url());
  EXPECT_EQ(calls_.load(), 1);
}

TEST_F(DatabricksRuntimeTest, ItsTokenIsNeverSentToAnotherWorkspace) {
  Provide("https://adb-1.2.azuredatabricks.net", "runtime-token-9");
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_AUTH_TYPE", "runtime"}});
  auto got = MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000);
  EXPECT_EQ(got.status().ToString(),
            "permission denied: runtime: the Databricks auth type runtime was chosen, but the "
            "Databricks runtime's workspace https://adb-1.2.azuredatabricks.net is not " +
                files_.url() + " (from DATABRICKS_HOST), so its token is not sent there");
  EXPECT_TRUE(files_.bearers().empty());
}

TEST_F(DatabricksRuntimeTest, AProvidersFailureAndNoProviderAreSaid) {
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_AUTH_TYPE", "runtime"}});
  auto none = MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000);
  EXPECT_EQ(none.status().ToString(),
            "permission denied: runtime: the Databricks auth type runtime was chosen, but in a "
            "Databricks runtime, but no binding has handed Sluice the runtime's own token (it lives "
            "in the notebook's Python context, dbruntime, which the Python package reads; from C, "
            "sluice_set_databricks_runtime_token_provider); or set DATABRICKS_TOKEN or a service "
            "principal (DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET) in the cluster's "
            "environment");
  SetDatabricksRuntimeTokenProvider(
      []() -> Result<DatabricksRuntimeToken> { return NotFoundError("no REPL context"); });
  auto failed = MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000);
  EXPECT_EQ(failed.status().ToString(),
            "permission denied: runtime: the Databricks auth type runtime was chosen, but in a "
            "Databricks runtime, but the Databricks runtime's token provider: no REPL context");
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"DATABRICKS_AUTH_TYPE", "runtime"}});
  EXPECT_EQ(MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000).status().ToString(),
            "permission denied: runtime: the Databricks auth type runtime was chosen, but not in a "
            "Databricks runtime (DATABRICKS_RUNTIME_VERSION is not set)");
}

// runtime-oauth: with scopes in the profile, the runtime's token (which the
// Files fake does not accept) is exchanged at the runtime's host,
// {host}/oidc/v1/token, for an OAuth token, checked as the real endpoint
// checks it: no client authentication, the SDK's token-exchange form with
// the runtime's current token as the subject and the scopes sorted once.
class DatabricksRuntimeOauthTest : public DatabricksRuntimeTest {
 protected:
  void SetUp() override {
    DatabricksRuntimeTest::SetUp();
    files_.ServeTokenEndpoint([this](const FakeRequest& r) -> FakeResponse {
      std::lock_guard<std::mutex> lock(mu_);
      exchanges_.push_back(r.body);
      if (refuse_ || !r.Header("authorization").empty()) {
        return {400, {{"Content-Type", "application/json"}},
                "{\"error\": \"invalid_request\", \"error_description\": \"subject token rejected\"}"};
      }
      const std::string prefix =
          "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=";
      const std::string suffix =
          "&subject_token_type=urn%3Adatabricks%3Aparams%3Aoauth%3Atoken-type%3Apersonal-access-token"
          "&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&scope=all-apis%20files%20sql";
      if (!r.body.starts_with(prefix) || !r.body.ends_with(suffix)) {
        return {400, {{"Content-Type", "application/json"}}, "{\"error\": \"invalid_request\"}"};
      }
      const std::string subject = r.body.substr(prefix.size(), r.body.size() - prefix.size() - suffix.size());
      const std::string token = "oauth-for-" + subject;
      files_.AcceptToken(token);
      return {200, {{"Content-Type", "application/json"}},
              "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_in\": " +
                  std::to_string(expires_in_.load()) + "}"};
    });
    // A new runtime token at every call, as a runtime rotates it.
    SetDatabricksRuntimeTokenProvider([this]() -> Result<DatabricksRuntimeToken> {
      return DatabricksRuntimeToken{files_.url(), "runtime-token-" + std::to_string(++calls_), std::nullopt};
    });
    WriteCfg("[DEFAULT]\nscopes = sql,all-apis  files sql\n");
  }
  std::vector<std::string> exchanges() {
    std::lock_guard<std::mutex> lock(mu_);
    return exchanges_;
  }
  std::mutex mu_;
  std::vector<std::string> exchanges_;
  std::atomic<bool> refuse_{false};
  std::atomic<int> expires_in_{3600};
};

TEST_F(DatabricksRuntimeOauthTest, WithScopesTheRuntimesTokenIsExchangedBeforeRuntimeIsTried) {
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->scopes, "all-apis files sql");
  EXPECT_EQ(DatabricksScopes(*config), "all-apis files sql");
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  // The runtime's token went only to the exchange; the read carried the
  // OAuth token bought with it.
  ASSERT_FALSE(files_.bearers().empty());
  for (const std::string& bearer : files_.bearers()) EXPECT_EQ(bearer.rfind("oauth-for-runtime-token-", 0), 0u);
  auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
  ASSERT_TRUE(whoami.ok()) << whoami.status().ToString();
  EXPECT_NE(whoami->find("  credentials: OAuth token for scopes all-apis files sql (from profile DEFAULT of " +
                         cfg_ + "), exchanged for the Databricks runtime's token of " + files_.url() +
                         " (bearer token)\n"),
            std::string::npos)
      << *whoami;
  EXPECT_NE(whoami->find("azure-cli (" + files_.url() + " is not an Azure Databricks workspace), "
                         "azure-devops-oidc (no client id (DATABRICKS_CLIENT_ID)), external-browser (only when "
                         "chosen (DATABRICKS_AUTH_TYPE=external-browser)), databricks-cli ('/nonexistent/databricks' not found (from DATABRICKS_CLI_PATH) (the "
                         "Databricks CLI is not installed)), runtime-oauth (used)\n"),
            std::string::npos)
      << *whoami;
  EXPECT_EQ(whoami->find("runtime-token-"), std::string::npos) << *whoami;
  // Without scopes the runtime strategy sends the runtime's token itself.
  WriteCfg("[DEFAULT]\nauth_type = runtime\n");
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}});
  auto plain = MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->source, "the Databricks runtime's token for " + files_.url());
}

TEST_F(DatabricksRuntimeOauthTest, ItsTokenIsExchangedAgainWithTheRuntimesNewTokenBeforeItExpires) {
  expires_in_ = 4;  // refreshed at half its life
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  const std::string first = files_.bearers().back();
  const size_t exchanged = exchanges().size();
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  auto again = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_GT(exchanges().size(), exchanged);
  EXPECT_NE(files_.bearers().back(), first);
  // Each exchange offered the token the provider gave at that call.
  const std::vector<std::string> all = exchanges();
  for (size_t i = 1; i < all.size(); ++i) EXPECT_NE(all[i], all[i - 1]);
  EXPECT_EQ(files_.bearers().back().rfind("oauth-for-runtime-token-", 0), 0u);
}

TEST_F(DatabricksRuntimeOauthTest, ARefusedExchangeIsAnErrorThatNamesTheEndpointAndNoToken) {
  refuse_ = true;
  // A host in the environment: the profile (its scopes) is read when named.
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_CONFIG_PROFILE", "DEFAULT"}});
  auto got = MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
  const std::string message = got.status().message();
  EXPECT_EQ(message.rfind("runtime-oauth: token exchange of the Databricks runtime's token to " + files_.url() +
                              "/oidc/v1/token failed: ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("(invalid_request)"), std::string::npos) << message;
  EXPECT_EQ(message.find("runtime-token-"), std::string::npos) << message;
  EXPECT_EQ(message.find("subject token rejected"), std::string::npos) << message;
  EXPECT_EQ(exchanges().size(), 1u);  // runtime was not tried after it: a broken source is said
  // A runtime of another workspace: its token is neither exchanged nor sent.
  SetDatabricksRuntimeTokenProvider([]() -> Result<DatabricksRuntimeToken> {
    return DatabricksRuntimeToken{"https://adb-1.2.azuredatabricks.net", "runtime-token-x", std::nullopt};
  });
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_CONFIG_PROFILE", "DEFAULT"}, {"DATABRICKS_AUTH_TYPE", "runtime-oauth"}});
  EXPECT_EQ(MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000).status().ToString(),
            "permission denied: runtime-oauth: the Databricks auth type runtime-oauth was chosen, but the "
            "Databricks runtime's workspace https://adb-1.2.azuredatabricks.net is not " +
                files_.url() + " (from DATABRICKS_HOST), so its token is not sent there");
  EXPECT_EQ(exchanges().size(), 1u);
  // Chosen without scopes.
  WriteCfg("[DEFAULT]\nhost = " + files_.url() + "\n");
  SetEnv({{"DATABRICKS_RUNTIME_VERSION", "15.4"}, {"DATABRICKS_AUTH_TYPE", "runtime-oauth"}});
  Provide(files_.url(), "runtime-token-y");
  EXPECT_EQ(MakeDatabricksCredentialChain(LoadDatabricksConfig().value())->Fetch(1000).status().ToString(),
            "permission denied: runtime-oauth: the Databricks auth type runtime-oauth was chosen, but in a "
            "Databricks runtime, but no OAuth scopes are configured (scopes in the profile), so the runtime's "
            "token is not exchanged");
}

}  // namespace
}  // namespace sluice

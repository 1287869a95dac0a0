// Databricks OIDC token federation (env-oidc, file-oidc, github-oidc;
// stores/credentials/databricks_oidc.h), the Azure CLI strategy
// (azure-cli; databricks_azure.h) and a Google service account's ID token
// (google-credentials, against FakeGoogle; databricks_google.h): found in the SDK's order, chosen by
// DATABRICKS_AUTH_TYPE, used for dbfs:/Volumes reads against
// FakeDatabricksFiles and refreshed ahead of expiry. FakeTokenExchange (below)
// fakes a workspace's OIDC discovery and token endpoint, checking the
// token-exchange form field by field, and GitHub Actions' ID token endpoint;
// the Azure CLI is a shell script that logs its arguments.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
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
#include "stores/dbfs/dbfs_store.h"
#include "stores/signing/jwt_rs256.h"
#include "stores/store.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"
#include "tests/stores/common/fake_databricks_files.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/azure_fakes.h"
#include "tests/stores/credentials/form_fields.h"
#include "tests/stores/credentials/gcs_fakes.h"

namespace sluice {
namespace {

using testing::CleanStoreEnv;
using testing::FakeDatabricksFiles;
using testing::FakeGoogle;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;
using testing::FormFields;
using testing::ScopedEnv;
using testing::TempDir;

constexpr char kFederatedClient[] = "wif-client-7";
constexpr char kGithubRequestToken[] = "gh-request-secret-3";
constexpr char kAzureDevopsAccessToken[] = "ado-system-access-secret-5";

// A workspace's OIDC discovery and token endpoint for the token-exchange
// grant, and GitHub Actions' ID token endpoint. The exchange must carry
// exactly the SDK's fields: grant, scope, subject token type, a subject
// token the fake knows ("idtok-..."; "idtok-bad" is refused) and, when the
// test expects one, the client id; no client authentication. Each token
// names the ID token it was bought with: "dbx-<id token>-<n>".
class FakeTokenExchange {
 public:
  FakeTokenExchange() : server_([this](const FakeRequest& r) { return Handle(r); }) {}
  std::string url() const { return server_.url(); }
  std::string token_endpoint() const { return url() + "/oidc/v1/token"; }
  FakeDatabricksFiles* files = nullptr;  // told every token issued
  std::atomic<int> expires_in{3600};
  std::optional<std::string> client_id;  // the client id the exchange must carry (none: none)
  std::map<std::string, std::string> extra_fields;  // more fields the exchange must carry
  // When set, the fake is an account host (accounts.cloud.databricks.com's
  // metadata: an OIDC endpoint with {account_id}, no workspace_id) of this
  // account.
  std::string account;

  std::vector<std::string> subject_tokens() {
    std::lock_guard<std::mutex> lock(mu_);
    return subject_tokens_;
  }
  std::vector<std::string> github_audiences() {
    std::lock_guard<std::mutex> lock(mu_);
    return github_audiences_;
  }

 private:
  FakeResponse Handle(const FakeRequest& r) {
    const std::vector<std::pair<std::string, std::string>> json = {{"Content-Type", "application/json"}};
    std::lock_guard<std::mutex> lock(mu_);
    if (r.method == "GET" && r.target == "/.well-known/databricks-config" && !account.empty()) {
      return {200, json, "{\"oidc_endpoint\": \"" + url() + "/oidc/accounts/{account_id}\", \"cloud\": \"aws\"}"};
    }
    if (r.method == "GET" && !account.empty() &&
        r.target == "/oidc/accounts/" + account + "/.well-known/oauth-authorization-server") {
      return {200, json, "{\"token_endpoint\": \"" + url() + "/oidc/accounts/" + account + "/v1/token\"}"};
    }
    if (r.method == "GET" && r.target == "/.well-known/databricks-config") {
      return {200, json, "{\"oidc_endpoint\": \"" + url() + "/oidc\", \"workspace_id\": \"123\"}"};
    }
    if (r.method == "GET" && r.target == "/oidc/.well-known/oauth-authorization-server") {
      return {200, json, "{\"issuer\": \"" + url() + "/oidc\", \"token_endpoint\": \"" + token_endpoint() + "\"}"};
    }
    if (r.method == "GET" && r.target.rfind("/github/token?api-version=2.0&audience=", 0) == 0) {
      if (r.Header("authorization") != std::string("Bearer ") + kGithubRequestToken) return {401, json, "{}"};
      github_audiences_.push_back(r.target.substr(r.target.find("&audience=") + 10));
      return {200, json, "{\"count\": 1, \"value\": \"idtok-github\"}"};
    }
    // Azure DevOps' ID token endpoint: a POST with an empty body and the
    // pipeline's access token; the fixed audience is not asked for.
    if (r.method == "POST" &&
        r.target == "/ado/proj-9/_apis/distributedtask/hubs/build/plans/plan-3/jobs/job-4/oidctoken"
                    "?api-version=7.2-preview.1") {
      if (r.Header("authorization") != std::string("Bearer ") + kAzureDevopsAccessToken || !r.body.empty() ||
          r.Header("content-type") != "application/json") {
        return {401, json, "{}"};
      }
      return {200, json, "{\"oidcToken\": \"idtok-ado\"}"};
    }
    // An Azure workspace's sign-in redirects to its tenant's Entra ID (the
    // fake's own, SLUICE_DATABRICKS_ENTRA_ENDPOINT), whose v1 token endpoint
    // takes GitHub's ID token as a federated credential's client assertion.
    if (r.method == "GET" && r.target == "/oidc/oauth2/v2.0/authorize") {
      return {302, {{"Location", url() + "/entra/tenant-gh/oauth2/v2.0/authorize?client_id=x"}}, ""};
    }
    if (r.method == "POST" && r.target == "/entra/tenant-gh/oauth2/token") {
      auto fields = FormFields(r.body);
      const std::map<std::string, std::string> want = {
          {"grant_type", "client_credentials"},
          {"scope", "all-apis"},
          {"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
          {"resource", "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d"},
          {"client_assertion", "idtok-github"},
          {"client_id", "azure-gh-client"}};
      if (fields != want || !r.Header("authorization").empty()) return {401, json, "{\"error\": \"invalid_client\"}"};
      subject_tokens_.push_back("entra");
      const std::string token = "entra-gh-" + std::to_string(subject_tokens_.size());
      if (files != nullptr) files->AcceptToken(token);
      return {200, json,
              "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_in\": \"" +
                  std::to_string(expires_in.load()) + "\"}"};
    }
    const std::string token_path = account.empty() ? "/oidc/v1/token" : "/oidc/accounts/" + account + "/v1/token";
    if (r.method != "POST" || r.target != token_path) return {404, {}, ""};
    auto fields = FormFields(r.body);
    std::map<std::string, std::string> want = {
        {"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
        {"scope", "all-apis"},
        {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
        {"subject_token", fields["subject_token"]}};
    if (client_id) want["client_id"] = *client_id;
    want.insert(extra_fields.begin(), extra_fields.end());
    if (fields != want || !r.Header("authorization").empty() ||
        fields["subject_token"].rfind("idtok-", 0) != 0) {
      return {400, json, "{\"error\": \"invalid_request\"}"};
    }
    if (fields["subject_token"] == "idtok-bad") {
      return {401, json, "{\"error\": \"invalid_grant\", \"error_description\": \"bad idtok-bad\"}"};
    }
    subject_tokens_.push_back(fields["subject_token"]);
    const std::string token = "dbx-" + fields["subject_token"] + "-" + std::to_string(subject_tokens_.size());
    if (files != nullptr) files->AcceptToken(token);
    return {200, json,
            "{\"access_token\": \"" + token + "\", \"token_type\": \"Bearer\", \"expires_in\": " +
                std::to_string(expires_in.load()) + "}"};
  }
  std::mutex mu_;
  std::vector<std::string> subject_tokens_;
  std::vector<std::string> github_audiences_;
  FakeHttpServer server_;
};

class DatabricksFederationTest : public ::testing::Test {
 protected:
  void SetEnv(std::map<std::string, std::optional<std::string>> extra) {
    env_.reset();
    auto env = CleanStoreEnv();
    for (auto& [k, v] : extra) env[k] = v;
    env_ = std::make_unique<ScopedEnv>(env);
  }
  // The chain of the environment as set: "<bearer> via <attempts>", or the error.
  std::string Resolve() {
    auto config = LoadDatabricksConfig();
    if (!config.ok()) return config.status().message();
    auto chain = MakeDatabricksCredentialChain(*config);
    auto got = chain->Fetch(1000);
    if (!got.ok()) return got.status().message();
    return got->bearer + " via " + chain->DescribeAttempts();
  }

  TempDir dir_{"databricks_federation_test"};
  FakeTokenExchange oidc_;
  std::unique_ptr<ScopedEnv> env_;
};

constexpr char kNotBefore[] =
    "pat (no token (DATABRICKS_TOKEN)), basic (no user name and password (DATABRICKS_USERNAME)), "
    "metadata-service (no metadata service (DATABRICKS_METADATA_SERVICE_URL)), ";

// DATABRICKS_GROUP_ID: the token exchange asks for the group's role
// (assume_group) with the profile's authorization_details; the strategies
// that cannot (a personal access token here) are passed over, and one
// chosen by DATABRICKS_AUTH_TYPE is an error.
TEST_F(DatabricksFederationTest, AGroupsTokenIsAskedForAndStrategiesWithoutGroupsArePassedOver) {
  const std::string cfg = dir_.path() + "/databrickscfg";
  const std::string details = "[{\"type\": \"workspace_permission\", \"object_type\": \"workspace\"}]";
  ASSERT_TRUE(WriteFileAtomic(cfg, "[grp]\nhost = " + oidc_.url() + "\ntoken = dapi-group-unused\n"
                                   "authorization_details = " + details + "\n").ok());
  oidc_.extra_fields = {{"assume_group", "g-4242"}, {"authorization_details", details}};
  const std::string no_group = "no group role assumption (DATABRICKS_GROUP_ID)";
  SetEnv({{"DATABRICKS_CONFIG_FILE", cfg}, {"DATABRICKS_CONFIG_PROFILE", "grp"}, {"DATABRICKS_GROUP_ID", "g-4242"},
          {"DATABRICKS_OIDC_TOKEN", "idtok-group"}});
  EXPECT_EQ(Resolve(), "dbx-idtok-group-1 via pat (" + no_group + "), basic (" + no_group + "), metadata-service (" +
                           no_group + "), oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), env-oidc (used)");
  SetEnv({{"DATABRICKS_CONFIG_FILE", cfg}, {"DATABRICKS_CONFIG_PROFILE", "grp"}, {"DATABRICKS_GROUP_ID", "g-4242"},
          {"DATABRICKS_AUTH_TYPE", "pat"}});
  EXPECT_NE(Resolve().find("auth type \"pat\" does not support group role assumption (DATABRICKS_GROUP_ID). Use "
                           "Databricks OAuth authentication"),
            std::string::npos)
      << Resolve();
  // Without the group, the fake refuses an exchange that lacks it.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN", "idtok-group"}});
  EXPECT_NE(Resolve().find("invalid_request"), std::string::npos) << Resolve();
}

// Each OIDC source in the SDK's order, the exchange's fields checked by the
// fake; DATABRICKS_AUTH_TYPE picks one by its SDK name.
TEST_F(DatabricksFederationTest, IdTokensAreExchangedInTheSdksOrder) {
  const std::string file = dir_.path() + "/id-token";
  ASSERT_TRUE(WriteFileAtomic(file, "  idtok-file\n").ok());
  // An account-wide federation policy: no client id is sent.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN", "idtok-env"},
          {"DATABRICKS_OIDC_TOKEN_FILEPATH", file}});
  EXPECT_EQ(Resolve(), "dbx-idtok-env-1 via " + std::string(kNotBefore) +
                           "oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), env-oidc (used)");
  // The variable DATABRICKS_OIDC_TOKEN_ENV names.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN", "idtok-env"},
          {"DATABRICKS_OIDC_TOKEN_ENV", "MY_ID_TOKEN"}, {"MY_ID_TOKEN", "idtok-mine"}});
  EXPECT_EQ(Resolve().substr(0, 17), "dbx-idtok-mine-2 ");
  // The file when no variable holds one (read trimmed).
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN_FILEPATH", file}});
  EXPECT_EQ(Resolve(), "dbx-idtok-file-3 via " + std::string(kNotBefore) +
                           "oauth-m2m (no client id (DATABRICKS_CLIENT_ID)), env-oidc (no ID token in "
                           "DATABRICKS_OIDC_TOKEN), file-oidc (used)");
  // A service principal's federation policy: its client id is sent.
  oidc_.client_id = kFederatedClient;
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"DATABRICKS_OIDC_TOKEN", "idtok-env"}});
  EXPECT_EQ(Resolve(), "dbx-idtok-env-4 via " + std::string(kNotBefore) +
                           "oauth-m2m (a client id but no client secret (DATABRICKS_CLIENT_SECRET)), env-oidc "
                           "(used)");
  // As the SDK, a token file beside a client id is a second kind of
  // credential: DATABRICKS_AUTH_TYPE must choose.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"DATABRICKS_OIDC_TOKEN_FILEPATH", file}});
  EXPECT_EQ(Resolve(),
            "validate: more than one authorization method configured: file-oidc and oauth (set "
            "DATABRICKS_AUTH_TYPE to choose one)");
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"DATABRICKS_OIDC_TOKEN_FILE", file}, {"DATABRICKS_OIDC_TOKEN", "idtok-env"},
          {"DATABRICKS_AUTH_TYPE", "file-oidc"}});
  EXPECT_EQ(Resolve(), "dbx-idtok-file-5 via file-oidc (used)");
  // GitHub Actions: the ID token for the token endpoint's audience.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
          {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", kGithubRequestToken}});
  EXPECT_EQ(Resolve(), "dbx-idtok-github-6 via " + std::string(kNotBefore) +
                           "oauth-m2m (a client id but no client secret (DATABRICKS_CLIENT_SECRET)), env-oidc "
                           "(no ID token in DATABRICKS_OIDC_TOKEN), file-oidc (no ID token file "
                           "(DATABRICKS_OIDC_TOKEN_FILEPATH)), github-oidc (used)");
  EXPECT_EQ(oidc_.github_audiences(), std::vector<std::string>{oidc_.token_endpoint()});
  // DATABRICKS_TOKEN_AUDIENCE, and DATABRICKS_AUTH_TYPE over an earlier one.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"DATABRICKS_OIDC_TOKEN", "idtok-env"}, {"DATABRICKS_AUTH_TYPE", "github-oidc"},
          {"DATABRICKS_TOKEN_AUDIENCE", "https://audience.example/x"},
          {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
          {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", kGithubRequestToken}});
  EXPECT_EQ(Resolve(), "dbx-idtok-github-7 via github-oidc (used)");
  EXPECT_EQ(oidc_.github_audiences().back(), "https://audience.example/x");
}

// An Azure DevOps pipeline's ID token (azure-devops-oidc, after azure-cli
// in the SDK's order): asked for at the pipeline's own endpoint, exchanged
// with the client id; a pipeline missing a variable leaves it out, naming
// the variables.
TEST_F(DatabricksFederationTest, AnAzureDevopsPipelinesIdTokenIsExchanged) {
  oidc_.client_id = kFederatedClient;
  const std::map<std::string, std::optional<std::string>> pipeline = {
      {"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
      {"SYSTEM_ACCESSTOKEN", kAzureDevopsAccessToken},
      {"SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", oidc_.url() + "/ado/"}, {"SYSTEM_TEAMPROJECTID", "proj-9"},
      {"SYSTEM_PLANID", "plan-3"}, {"SYSTEM_JOBID", "job-4"}, {"SYSTEM_HOSTTYPE", "build"}};
  SetEnv(pipeline);
  const std::string got = Resolve();
  EXPECT_EQ(got.substr(0, got.find(" via ")), "dbx-idtok-ado-1");
  EXPECT_NE(got.find("github-oidc (not in GitHub Actions (ACTIONS_ID_TOKEN_REQUEST_URL, "
                     "ACTIONS_ID_TOKEN_REQUEST_TOKEN)), azure-client-secret (no Azure client id (ARM_CLIENT_ID)), "
                     "github-oidc-azure (no Azure client id (ARM_CLIENT_ID)), azure-cli ("),
            std::string::npos)
      << got;
  EXPECT_EQ(got.substr(got.size() - 24), "azure-devops-oidc (used)") << got;
  auto missing = pipeline;
  missing["SYSTEM_PLANID"] = std::nullopt;
  missing["SYSTEM_JOBID"] = std::nullopt;
  missing["DATABRICKS_AUTH_TYPE"] = "azure-devops-oidc";
  SetEnv(missing);
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: azure-devops-oidc (an Azure DevOps pipeline "
                       "without SYSTEM_PLANID, SYSTEM_JOBID)");
  missing = pipeline;
  missing["SYSTEM_ACCESSTOKEN"] = "wrong-access-token";
  missing["DATABRICKS_AUTH_TYPE"] = "azure-devops-oidc";
  SetEnv(missing);
  const std::string refused = Resolve();
  EXPECT_EQ(refused.rfind("no Databricks credentials found; tried: azure-devops-oidc (Azure DevOps gave no ID "
                          "token: Azure DevOps' ID token request failed: ",
                          0),
            0u)
      << refused;
  EXPECT_EQ(refused.find("wrong-access-token"), std::string::npos) << refused;
  // A client id is needed, as the SDK's strategy requires one.
  missing = pipeline;
  missing["DATABRICKS_CLIENT_ID"] = std::nullopt;
  missing["DATABRICKS_AUTH_TYPE"] = "azure-devops-oidc";
  SetEnv(missing);
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: azure-devops-oidc (no client id "
                       "(DATABRICKS_CLIENT_ID))");
}

// GitHub Actions' ID token for Entra ID (github-oidc-azure, after
// azure-client-secret): asked for the audience api://AzureADTokenExchange,
// sent as the Azure client's assertion to the tenant the workspace's sign-in
// redirects to (or ARM_TENANT_ID); only the workspace's token is sent.
TEST_F(DatabricksFederationTest, GithubActionsSignsInToEntraIdForAnAzureWorkspace) {
  const std::map<std::string, std::optional<std::string>> github = {
      {"DATABRICKS_HOST", oidc_.url()}, {"ARM_CLIENT_ID", "azure-gh-client"},
      {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", oidc_.url() + "/entra/"},
      {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
      {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", kGithubRequestToken}};
  SetEnv(github);
  const std::string got = Resolve();
  EXPECT_EQ(got.substr(0, got.find(" via ")), "entra-gh-1");
  EXPECT_NE(got.find("github-oidc (no client id (DATABRICKS_CLIENT_ID)), azure-client-secret (an Azure client id "
                     "but no client secret (ARM_CLIENT_SECRET)), github-oidc-azure (used)"),
            std::string::npos)
      << got;
  EXPECT_EQ(oidc_.github_audiences(), std::vector<std::string>{"api://AzureADTokenExchange"});
  auto chain_env = github;
  chain_env["DATABRICKS_AUTH_TYPE"] = "github-oidc-azure";
  chain_env["ARM_TENANT_ID"] = "tenant-gh";
  SetEnv(chain_env);
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  auto credential = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_EQ(credential->bearer, "entra-gh-2");
  EXPECT_EQ(credential->source, "GitHub Actions' ID token for Azure client azure-gh-client of tenant tenant-gh (from "
                                "ARM_CLIENT_ID)");
  EXPECT_TRUE(credential->headers.empty());
  // A tenant Entra ID does not know: the endpoint's refusal, no ID token.
  chain_env["ARM_TENANT_ID"] = "tenant-other";
  SetEnv(chain_env);
  const std::string refused = Resolve();
  EXPECT_EQ(refused.rfind("github-oidc-azure: Entra ID token request for Azure client azure-gh-client (GitHub "
                          "Actions' ID token) to " + oidc_.url() + "/entra/tenant-other/oauth2/token failed: ",
                          0),
            0u)
      << refused;
  EXPECT_EQ(refused.find("idtok-github"), std::string::npos) << refused;
  // Not in GitHub Actions, and not an Azure workspace.
  chain_env = github;
  chain_env["DATABRICKS_AUTH_TYPE"] = "github-oidc-azure";
  chain_env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = std::nullopt;
  SetEnv(chain_env);
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: github-oidc-azure (not in GitHub Actions "
                       "(ACTIONS_ID_TOKEN_REQUEST_TOKEN))");
  chain_env = github;
  chain_env["SLUICE_DATABRICKS_ENTRA_ENDPOINT"] = std::nullopt;
  chain_env["DATABRICKS_AUTH_TYPE"] = "github-oidc-azure";
  SetEnv(chain_env);
  EXPECT_EQ(Resolve(), "github-oidc-azure: an Azure service principal (from ARM_CLIENT_ID) signs in to an Azure "
                       "Databricks workspace, and " + oidc_.url() + " is not one (*.azuredatabricks.net, "
                       "*.databricks.azure.us, *.databricks.azure.cn)");
}

// An account-level host: its metadata's OIDC endpoint is the account's
// (DATABRICKS_ACCOUNT_ID fills {account_id}), and GitHub's ID token is asked
// for the account id as its audience; without the account id, an error.
TEST_F(DatabricksFederationTest, AnAccountHostsOidcEndpointsAreTheAccounts) {
  oidc_.account = "acc-0c1d";
  oidc_.client_id = kFederatedClient;
  std::map<std::string, std::optional<std::string>> env = {
      {"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
      {"DATABRICKS_ACCOUNT_ID", "acc-0c1d"},
      {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
      {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", kGithubRequestToken}};
  SetEnv(env);
  const std::string got = Resolve();
  EXPECT_EQ(got.substr(0, got.find(" via ")), "dbx-idtok-github-1") << got;
  EXPECT_EQ(oidc_.github_audiences(), std::vector<std::string>{"acc-0c1d"});
  // DATABRICKS_TOKEN_AUDIENCE still wins; env-oidc needs no audience.
  env["DATABRICKS_TOKEN_AUDIENCE"] = "aud-set";
  SetEnv(env);
  EXPECT_EQ(Resolve().substr(0, 19), "dbx-idtok-github-2 ");
  EXPECT_EQ(oidc_.github_audiences().back(), "aud-set");
  oidc_.client_id.reset();
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_ACCOUNT_ID", "acc-0c1d"},
          {"DATABRICKS_OIDC_TOKEN", "idtok-env"}});
  EXPECT_EQ(Resolve().substr(0, 16), "dbx-idtok-env-3 ");
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN", "idtok-env"}});
  EXPECT_EQ(Resolve(), "env-oidc: the OIDC endpoint of the account host " + oidc_.url() +
                           " needs the account id: set DATABRICKS_ACCOUNT_ID (or account_id in the profile) (tried before: "
                           "pat (no token (DATABRICKS_TOKEN)), basic (no user name and password (DATABRICKS_USERNAME)), "
                           "metadata-service (no metadata service (DATABRICKS_METADATA_SERVICE_URL)), oauth-m2m (no "
                           "client id (DATABRICKS_CLIENT_ID)))");
}

// A refused exchange stops the chain with the endpoint's error code; an ID
// token that is missing leaves its strategy out, saying why. Never the ID
// token or the request token.
TEST_F(DatabricksFederationTest, FailuresSayWhatWasTriedAndWhy) {
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN", "idtok-bad"}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok());
  auto refused = MakeDatabricksCredentialChain(*config)->Fetch(1000);
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  const std::string message = refused.status().message();
  EXPECT_EQ(message.rfind("env-oidc: token exchange for the account to " + oidc_.token_endpoint() + " failed: ", 0), 0u)
      << message;
  EXPECT_NE(message.find("(invalid_grant)"), std::string::npos) << message;
  EXPECT_EQ(message.find("idtok-bad"), std::string::npos) << message;

  const std::string missing = dir_.path() + "/missing-token";
  const std::string empty = dir_.path() + "/empty-token";
  ASSERT_TRUE(WriteFileAtomic(empty, "\n").ok());
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN_FILEPATH", missing}});
  std::string got = Resolve();
  EXPECT_NE(got.find("file-oidc (cannot read the ID token file " + missing), std::string::npos) << got;
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_OIDC_TOKEN_FILEPATH", empty},
          {"DATABRICKS_AUTH_TYPE", "file-oidc"}});
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: file-oidc (the ID token file " + empty +
                           " is empty)");
  // GitHub's endpoint refusing the request token: no ID token, no strategy.
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
          {"DATABRICKS_AUTH_TYPE", "github-oidc"},
          {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
          {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "wrong-request-token"}});
  got = Resolve();
  EXPECT_EQ(got.rfind("no Databricks credentials found; tried: github-oidc (GitHub Actions gave no ID token: ", 0),
            0u)
      << got;
  EXPECT_NE(got.find("401"), std::string::npos) << got;
  EXPECT_EQ(got.find("wrong-request-token"), std::string::npos) << got;
}

class DatabricksFederationReadTest : public DatabricksFederationTest {
 protected:
  void SetUp() override {
    files_.Put("/Volumes/main/default/vol/ds/index.json", "{\"shards\": []}");
    oidc_.files = &files_;
  }
  std::string Whoami() {
    auto whoami = DescribeDbfsAuth("dbfs:/Volumes/main/default/vol/ds");
    return whoami.ok() ? *whoami : whoami.status().message();
  }
  FakeDatabricksFiles files_;
  EventLoop loop_;
};

// A workload's rotated token file: each refresh (at half the token's life)
// exchanges the file's current ID token.
TEST_F(DatabricksFederationReadTest, AFederatedTokenReadsAndIsRefreshedFromTheRotatedFile) {
  const std::string file = dir_.path() + "/id-token";
  ASSERT_TRUE(WriteFileAtomic(file, "idtok-first").ok());
  oidc_.expires_in = 4;
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"DATABRICKS_OIDC_TOKEN_FILEPATH", file},
          {"DATABRICKS_DISCOVERY_URL", oidc_.url() + "/oidc/.well-known/oauth-authorization-server"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, "{\"shards\": []}");
  EXPECT_EQ(files_.bearers().back(), "dbx-idtok-first-1");
  ASSERT_TRUE(WriteFileAtomic(file, "idtok-second").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  auto again = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  // (how many refreshes ran meanwhile is the refresher's timing)
  EXPECT_EQ(files_.bearers().back().rfind("dbx-idtok-second-", 0), 0u) << files_.bearers().back();
  const std::string whoami = Whoami();
  EXPECT_NE(whoami.find("  credentials: OIDC token federation of the account (ID token from " + file +
                        ") (bearer token)\n"),
            std::string::npos)
      << whoami;
  EXPECT_NE(whoami.find("file-oidc (used)"), std::string::npos) << whoami;
  for (const char* secret : {"idtok-first", "idtok-second", "dbx-"}) {
    EXPECT_EQ(whoami.find(secret), std::string::npos) << secret;
  }
}

// A pipeline's (azure-devops-oidc) and a GitHub job's Entra ID token
// (github-oidc-azure) each read a volume and are bought again before they
// expire during the pass.
TEST_F(DatabricksFederationReadTest, CiPipelineTokensReadAndAreRefreshed) {
  oidc_.expires_in = 4;
  oidc_.client_id = kFederatedClient;
  const std::map<std::string, std::optional<std::string>> pipelines[] = {
      {{"DATABRICKS_HOST", files_.url()}, {"DATABRICKS_CLIENT_ID", kFederatedClient},
       {"DATABRICKS_DISCOVERY_URL", oidc_.url() + "/oidc/.well-known/oauth-authorization-server"},
       {"SYSTEM_ACCESSTOKEN", kAzureDevopsAccessToken}, {"SYSTEM_TEAMFOUNDATIONCOLLECTIONURI", oidc_.url() + "/ado/"},
       {"SYSTEM_TEAMPROJECTID", "proj-9"}, {"SYSTEM_PLANID", "plan-3"}, {"SYSTEM_JOBID", "job-4"},
       {"SYSTEM_HOSTTYPE", "build"}},
      {{"DATABRICKS_HOST", files_.url()}, {"ARM_CLIENT_ID", "azure-gh-client"}, {"ARM_TENANT_ID", "tenant-gh"},
       {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", oidc_.url() + "/entra/"},
       {"ACTIONS_ID_TOKEN_REQUEST_URL", oidc_.url() + "/github/token?api-version=2.0"},
       {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", kGithubRequestToken}}};
  const std::string prefixes[] = {"dbx-idtok-ado-", "entra-gh-"};
  const std::string used[] = {"azure-devops-oidc (used)", "github-oidc-azure (used)"};
  for (int i = 0; i < 2; ++i) {
    SetEnv(pipelines[i]);
    auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
    const std::string first = files_.bearers().back();
    EXPECT_EQ(first.rfind(prefixes[i], 0), 0u) << first;
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    auto again = loop_.Run((*store)->Get("index.json"));
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(*again, "{\"shards\": []}");
    // (how many refreshes ran meanwhile is the refresher's timing)
    EXPECT_EQ(files_.bearers().back().rfind(prefixes[i], 0), 0u) << files_.bearers().back();
    EXPECT_NE(files_.bearers().back(), first);
    const std::string whoami = Whoami();
    EXPECT_NE(whoami.find(used[i]), std::string::npos) << whoami;
    EXPECT_EQ(whoami.find(prefixes[i]), std::string::npos) << whoami;
  }
}

// The Azure CLI as a script: logs each call's arguments to <dir>/az.log;
// `account show` prints `show` (the login); `account get-access-token`
// prints a token for the resource it was asked for (`workspace` for the
// Azure Databricks application, else `management`), numbered by a counter,
// expiring `life` seconds from now; exits 1 with the CLI's sign-in error
// when <dir>/signed-out exists.
std::string WriteFakeAz(const std::string& dir, const std::string& workspace, const std::string& show,
                        int life) {
  EXPECT_TRUE(WriteFileAtomic(dir + "/show.json", show).ok());
  const std::string script =
      "#!/bin/sh\n"
      "echo \"$*\" >> '" + dir + "/az.log'\n"
      "if [ -e '" + dir + "/signed-out' ]; then echo \"ERROR: Please run 'az login' to setup account.\" >&2; "
      "exit 1; fi\n"
      "if [ \"$2\" = show ]; then cat '" + dir + "/show.json'; exit 0; fi\n"
      "n=$(( $(cat '" + dir + "/count' 2>/dev/null || echo 0) + 1 )); echo $n > '" + dir + "/count'\n"
      "case \"$4\" in 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d) t=\"" + workspace + "$n\";; *) t=\"cli-management-$n\";; esac\n"
      "printf '{\"accessToken\": \"%s\", \"expiresOn\": \"2000-01-01 00:00:00.000000\", \"expires_on\": %s, "
      "\"tokenType\": \"Bearer\"}' \"$t\" $(( $(date +%s) + " + std::to_string(life) + " ))\n";
  EXPECT_TRUE(WriteFileAtomic(dir + "/az", script).ok());
  EXPECT_EQ(::chmod((dir + "/az").c_str(), 0755), 0);
  return dir + "/az";
}

constexpr char kCliTenant[] = "9a3c-cli-tenant";
constexpr char kServicePrincipalLogin[] = R"({"user": {"name": "0c1d-sp", "type": "servicePrincipal"}})";

// A service principal's `az login`: the workspace's token as the bearer,
// the management one beside it, the tenant from the workspace's sign-in
// page, the subscription of the resource id first; refreshed ahead of
// expiry; whoami names the CLI and the tenant, never a token.
TEST_F(DatabricksFederationReadTest, AnAzureCliLoginReadsWithBothTokensAndIsRefreshed) {
  const std::string az = WriteFakeAz(dir_.path(), "cli-workspace-", kServicePrincipalLogin, 4);
  for (int n = 1; n <= 12; ++n) files_.AcceptToken("cli-workspace-" + std::to_string(n));
  files_.SetAadTenant(kCliTenant);
  const std::string resource = "/subscriptions/sub-1/resourceGroups/g/providers/Microsoft.Databricks/workspaces/w";
  // SLUICE_DATABRICKS_ENTRA_ENDPOINT makes the loopback host an Azure
  // workspace (the CLI, not that endpoint, is asked for tokens).
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"SLUICE_AZURE_CLI", az}, {"DATABRICKS_AZURE_RESOURCE_ID", resource},
          {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", "http://127.0.0.1:9/"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto got = loop_.Run((*store)->Get("index.json"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(files_.bearers().back(), "cli-workspace-1");
  EXPECT_EQ(files_.management_tokens().back(), "cli-management-2");
  EXPECT_EQ(files_.resource_ids().back(), resource);
  const std::string call = "account get-access-token --resource ";
  const std::string args = " --output json --subscription sub-1 --tenant " + std::string(kCliTenant) + "\n";
  EXPECT_EQ(ReadFile(dir_.path() + "/az.log", 1 << 12).value(),
            "account show --output json\n" + call + "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d" + args +
                "account show --output json\n" + call + "https://management.core.windows.net/" + args);
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  EXPECT_NE(files_.bearers().back(), "cli-workspace-1");
  const std::string whoami = Whoami();
  EXPECT_NE(whoami.find("  credentials: Azure CLI login (" + az + " account get-access-token, tenant " +
                        kCliTenant + ") (bearer token)\n"),
            std::string::npos)
      << whoami;
  EXPECT_NE(whoami.find("azure-client-secret (no Azure client id (ARM_CLIENT_ID)), github-oidc-azure (no Azure "
                        "client id (ARM_CLIENT_ID)), azure-cli (used)"),
            std::string::npos)
      << whoami;
  EXPECT_EQ(whoami.find("cli-workspace-"), std::string::npos);
  EXPECT_EQ(whoami.find("cli-management-"), std::string::npos);
}

// A user's login (the token has a "upn" claim): no management token; a
// managed identity's login is not given --tenant; found on PATH.
TEST_F(DatabricksFederationReadTest, AnAzureCliUserLoginSendsOnlyItsToken) {
  const std::string user_jwt_prefix = "e30." + Base64UrlEncode("{\"upn\": \"ada@example.com\"}") + ".sig-";
  ASSERT_EQ(JwtClaimsText(user_jwt_prefix + "1").value_or(""), "{\"upn\": \"ada@example.com\"}");
  WriteFakeAz(dir_.path(), user_jwt_prefix,
              R"({"user": {"name": "systemAssignedIdentity", "type": "servicePrincipal"}})", 3600);
  files_.AcceptToken(user_jwt_prefix + "1");
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"SLUICE_AZURE_CLI", std::nullopt},
          {"PATH", "/nonexistent/bin:" + dir_.path() + ":/usr/bin:/bin"}, {"ARM_TENANT_ID", kCliTenant},
          {"DATABRICKS_AUTH_TYPE", "azure-cli"}, {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", "http://127.0.0.1:9/"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  EXPECT_EQ(files_.bearers().back(), user_jwt_prefix + "1");
  EXPECT_EQ(files_.management_tokens().back(), "");
  EXPECT_EQ(ReadFile(dir_.path() + "/az.log", 1 << 12).value(),
            "account show --output json\n"
            "account get-access-token --resource 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d --output json\n");
  EXPECT_NE(Whoami().find("  credentials: Azure CLI login (az account get-access-token, tenant 9a3c-cli-tenant)"),
            std::string::npos)
      << Whoami();
}

// Signed out, missing, or not an Azure workspace: the strategy does not
// apply, and the chain's error says why for each.
TEST_F(DatabricksFederationTest, AnAzureCliThatCannotGiveATokenIsLeftOut) {
  WriteFakeAz(dir_.path(), "cli-workspace-", kServicePrincipalLogin, 3600);
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/signed-out", "").ok());
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_AUTH_TYPE", "azure-cli"}, {"ARM_TENANT_ID", kCliTenant},
          {"SLUICE_AZURE_CLI", dir_.path() + "/az"}, {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", "http://127.0.0.1:9/"}});
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: azure-cli ('" + dir_.path() +
                           "/az account get-access-token' for 2ff814a6-3304-4ab8-85cb-cd0e6f879c1d: '" + dir_.path() +
                           "/az' exited with status 1: ERROR: Please run 'az login' to setup account.)");
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_AUTH_TYPE", "azure-cli"},
          {"SLUICE_DATABRICKS_ENTRA_ENDPOINT", "http://127.0.0.1:9/"}});
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: azure-cli ('/nonexistent/az' (SLUICE_AZURE_CLI) "
                       "not found)");
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_AUTH_TYPE", "azure-cli"},
          {"SLUICE_AZURE_CLI", dir_.path() + "/az"}});
  EXPECT_EQ(Resolve(), "no Databricks credentials found; tried: azure-cli (" + oidc_.url() +
                           " is not an Azure Databricks workspace)");
}

// google-credentials: the key's JSON in GOOGLE_CREDENTIALS (or a file's
// path) signs an ID token grant for the host: the ID token is the bearer,
// the account's access token (cloud-platform and compute) goes beside it;
// it comes last in the SDK's order and is refreshed before the ID token
// expires; whoami names the account, never the key or a token.
TEST_F(DatabricksFederationReadTest, AGoogleServiceAccountsIdTokenReadsAndIsRefreshed) {
  FakeGoogle google;
  google.on_issue = [this](const std::string& token) { files_.AcceptToken(token); };
  google.expires_in = 4;
  const testing::TestCertificate cert = testing::MakeTestCertificate("databricks-sa");
  std::string pem;
  for (char c : cert.key_pem) pem += c == '\n' ? std::string("\\n") : std::string(1, c);
  const std::string key = "{\"type\": \"service_account\", \"client_email\": \"reader@p.iam.gserviceaccount.com\", "
                          "\"private_key_id\": \"k1\", \"private_key\": \"" + pem + "\", \"token_uri\": \"" +
                          google.url() + "/token\"}";
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"GOOGLE_CREDENTIALS", key}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto chain = MakeDatabricksCredentialChain(*config);
  auto got = chain->Fetch(1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(JwtClaimsText(got->bearer).value_or("").rfind("{\"aud\": \"" + files_.url() + "\", \"exp\": ", 0), 0u);
  ASSERT_EQ(got->headers.size(), 1u);
  EXPECT_EQ(got->headers[0].first, "x-databricks-gcp-sa-access-token");
  EXPECT_EQ(got->headers[0].second.rfind("ya29.sa-", 0), 0u);
  EXPECT_EQ(google.last("/token", "jwt_scope"),
            "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/compute");
  EXPECT_EQ(chain->DescribeAttempts().substr(chain->DescribeAttempts().rfind("), ") + 3),
            "google-credentials (used)");

  // A read, and a refresh: the file's path works as well as the JSON.
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/sa.json", key).ok());
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"GOOGLE_CREDENTIALS", dir_.path() + "/sa.json"}});
  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  const std::string first = files_.bearers().back();
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  EXPECT_NE(files_.bearers().back(), first);
  EXPECT_EQ(JwtClaimsText(files_.bearers().back()).value_or("").rfind("{\"aud\": \"" + files_.url() + "\"", 0), 0u);
  const std::string whoami = Whoami();
  EXPECT_NE(whoami.find("  credentials: Google service account reader@p.iam.gserviceaccount.com (ID token; key "
                        "from GOOGLE_CREDENTIALS) (bearer token)\n"),
            std::string::npos)
      << whoami;
  EXPECT_EQ(whoami.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(whoami.find("id-sig-"), std::string::npos);

  // A key that is not one: an error naming where it came from, not its text.
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"GOOGLE_CREDENTIALS", "{\"type\": \"authorized_user\"}"}});
  EXPECT_NE(Resolve().find("google-credentials: "), std::string::npos) << Resolve();
  EXPECT_NE(Resolve().find("GOOGLE_CREDENTIALS"), std::string::npos) << Resolve();
}

// google-id: Application Default Credentials (here a service account's key
// in GOOGLE_APPLICATION_CREDENTIALS, its token asked for IAM's scope)
// impersonate DATABRICKS_GOOGLE_SERVICE_ACCOUNT: IAM Credentials'
// generateIdToken for the host is the bearer, generateAccessToken (scopes
// cloud-platform and compute) goes beside it; it comes after
// google-credentials; whoami names both accounts, never a token or key.
TEST_F(DatabricksFederationReadTest, GoogleIdImpersonatesTheAccountThroughApplicationDefaultCredentials) {
  FakeGoogle google;
  google.on_issue = [this](const std::string& token) { files_.AcceptToken(token); };
  const testing::TestCertificate cert = testing::MakeTestCertificate("adc-sa");
  std::string pem;
  for (char c : cert.key_pem) pem += c == '\n' ? std::string("\\n") : std::string(1, c);
  ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/adc.json",
                              "{\"type\": \"service_account\", \"client_email\": \"adc@p.iam.gserviceaccount.com\", "
                              "\"private_key_id\": \"k2\", \"private_key\": \"" + pem + "\", \"token_uri\": \"" +
                                  google.url() + "/token\"}")
                  .ok());
  SetEnv({{"DATABRICKS_HOST", files_.url()},
          {"DATABRICKS_GOOGLE_SERVICE_ACCOUNT", "reader@p.iam.gserviceaccount.com"},
          {"GOOGLE_APPLICATION_CREDENTIALS", dir_.path() + "/adc.json"},
          {"SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT", google.url() + "/"}});
  auto config = LoadDatabricksConfig();
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto chain = MakeDatabricksCredentialChain(*config);
  auto got = chain->Fetch(1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(JwtClaimsText(got->bearer).value_or("").rfind("{\"aud\": \"" + files_.url() + "\", \"exp\": ", 0), 0u);
  EXPECT_EQ(google.last("/token", "jwt_scope"), "https://www.googleapis.com/auth/iam");
  EXPECT_EQ(google.last("iam", "body"),  // the last: generateAccessToken, after generateIdToken
            "{\"delegates\": [], \"scope\": [\"https://www.googleapis.com/auth/cloud-platform\", "
            "\"https://www.googleapis.com/auth/compute\"], \"lifetime\": \"3600s\"}");
  EXPECT_EQ(google.requests("iam"), 2);
  ASSERT_EQ(got->headers.size(), 1u);
  EXPECT_EQ(got->headers[0].first, "x-databricks-gcp-sa-access-token");
  EXPECT_EQ(got->headers[0].second.rfind("ya29.impersonated-", 0), 0u);
  EXPECT_EQ(got->source, "Google service account reader@p.iam.gserviceaccount.com (ID token, impersonated by "
                         "service account adc@p.iam.gserviceaccount.com; from "
                         "DATABRICKS_GOOGLE_SERVICE_ACCOUNT)");
  EXPECT_EQ(chain->DescribeAttempts().substr(chain->DescribeAttempts().rfind("), ") + 3), "google-id (used)");

  auto store = OpenStore("dbfs:/Volumes/main/default/vol/ds", loop_.executor());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(loop_.Run((*store)->Get("index.json")).ok());
  const std::string whoami = Whoami();
  EXPECT_NE(whoami.find("  credentials: Google service account reader@p.iam.gserviceaccount.com (ID token"),
            std::string::npos)
      << whoami;
  EXPECT_EQ(whoami.find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(whoami.find("id-sig-"), std::string::npos);
  EXPECT_EQ(whoami.find("ya29."), std::string::npos);

  // Without Application Default Credentials: an error naming the account, not a skipped source.
  SetEnv({{"DATABRICKS_HOST", files_.url()}, {"DATABRICKS_AUTH_TYPE", "google-id"},
          {"DATABRICKS_GOOGLE_SERVICE_ACCOUNT", "reader@p.iam.gserviceaccount.com"},
          {"HOME", dir_.path() + "/nohome"}});
  EXPECT_EQ(Resolve().rfind("google-id: Application Default Credentials to impersonate "
                            "reader@p.iam.gserviceaccount.com (from DATABRICKS_GOOGLE_SERVICE_ACCOUNT): ", 0),
            0u)
      << Resolve();
}

// runtime-oauth chosen where it cannot apply: an error naming the auth type
// and why (outside a runtime; inside one with no scopes); inside a runtime
// with nothing chosen the chain says why it went past it, and past runtime
// when no binding registered the runtime's token provider
// (databricks_credential_test.cc's DatabricksRuntimeOauthTest has the rest).
TEST_F(DatabricksFederationTest, RuntimeOauthChosenWhereItCannotApplySaysWhy) {
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_AUTH_TYPE", "runtime-oauth"}});
  EXPECT_EQ(Resolve(),
            "runtime-oauth: the Databricks auth type runtime-oauth was chosen, but not in a Databricks runtime "
            "(DATABRICKS_RUNTIME_VERSION is not set)");
  SetEnv({{"DATABRICKS_HOST", oidc_.url()}, {"DATABRICKS_RUNTIME_VERSION", "15.4"}});
  const std::string tried = Resolve();
  EXPECT_NE(tried.find("runtime-oauth (in a Databricks runtime, but no binding has handed Sluice the runtime's "
                       "own token"),
            std::string::npos)
      << tried;
  EXPECT_NE(tried.find("runtime (in a Databricks runtime, but no binding has handed Sluice the runtime's own "
                       "token (it lives in the notebook's Python context, dbruntime, which the Python package "
                       "reads;"),
            std::string::npos)
      << tried;
}

}  // namespace
}  // namespace sluice

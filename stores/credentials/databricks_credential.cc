#include "stores/credentials/databricks_credential.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "stores/common/store_keys.h"
#include "stores/credentials/databricks_azure.h"
#include "stores/credentials/databricks_cli.h"
#include "stores/credentials/databricks_external_browser.h"
#include "stores/credentials/databricks_google.h"
#include "stores/credentials/databricks_metadata_service.h"
#include "stores/credentials/databricks_model_serving.h"
#include "stores/credentials/databricks_oidc.h"
#include "stores/credentials/databricks_runtime_oauth.h"
#include "stores/credentials/databricks_runtime_token.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

class DatabricksPatSource final : public CredentialSource {
 public:
  explicit DatabricksPatSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "pat"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    if (config_.token.empty()) return NotFoundError("no token (DATABRICKS_TOKEN)");
    if (config_.host.empty()) return NotFoundError("a token but no host (DATABRICKS_HOST)");
    Credential out;
    out.source = "personal access token from " + DatabricksSettingOrigin(config_, "token");
    out.bearer = config_.token;
    return out;
  }

 private:
  DatabricksConfig config_;
};

// Sluice sends bearer tokens only; the SDK's basic strategy sends the user
// name and password on every request.
class DatabricksBasicSource final : public CredentialSource {
 public:
  explicit DatabricksBasicSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "basic"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    if (config_.username.empty() && config_.password.empty()) {
      return NotFoundError("no user name and password (DATABRICKS_USERNAME)");
    }
    return UnimplementedError(
        "user name and password (from " +
        DatabricksSettingOrigin(config_, config_.username.empty() ? "password" : "username") +
        ") are not supported; use a personal access token or OAuth (DATABRICKS_CLIENT_ID)");
  }

 private:
  DatabricksConfig config_;
};

class DatabricksM2mSource final : public CredentialSource {
 public:
  explicit DatabricksM2mSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "oauth-m2m"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.client_id.empty() || config_.client_secret.empty()) {
      return NotFoundError(config_.client_id.empty()
                               ? "no client id (DATABRICKS_CLIENT_ID)"
                               : "a client id but no client secret (DATABRICKS_CLIENT_SECRET)");
    }
    if (config_.host.empty()) return NotFoundError("client credentials but no host (DATABRICKS_HOST)");
    SLUICE_ASSIGN_OR_RETURN(std::string token_endpoint, DatabricksTokenEndpoint(config_));
    SLUICE_ASSIGN_OR_RETURN(
        AccessToken token,
        RequestDatabricksToken(token_endpoint,
                               // Empty fields are left out, as the SDK leaves them out.
                               {{"grant_type", "client_credentials"},
                                {"scope", DatabricksScopes(config_)},
                                {"authorization_details", config_.authorization_details},
                                {"assume_group", config_.group_id}},
                               "token request for client " + config_.client_id,
                               {{"authorization",
                                 "Basic " + Base64Encode(config_.client_id + ":" + config_.client_secret)}}));
    return BearerCredential("OAuth M2M for client " + config_.client_id + " (from " +
                                DatabricksSettingOrigin(config_, "client_id") + ")",
                            std::move(token), now);
  }

 private:
  DatabricksConfig config_;
};

// A strategy that cannot mint a token of a group (DATABRICKS_GROUP_ID), as
// the SDK's supports_group=False: passed over in the chain, an error when
// DATABRICKS_AUTH_TYPE chose it.
class DatabricksNoGroupSource final : public CredentialSource {
 public:
  DatabricksNoGroupSource(std::string name, bool chosen) : name_(std::move(name)), chosen_(chosen) {}
  std::string name() const override { return name_; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    if (chosen_) {
      return InvalidArgumentError("auth type \"" + name_ +
                                  "\" does not support group role assumption (DATABRICKS_GROUP_ID). Use "
                                  "Databricks OAuth authentication");
    }
    return NotFoundError("no group role assumption (DATABRICKS_GROUP_ID)");
  }

 private:
  std::string name_;
  bool chosen_;
};

// The strategies that ask Databricks' token endpoint for a token and so
// can ask for a group's (assume_group), as the SDK's supports_group=True.
bool DatabricksSupportsGroup(const std::string& name) {
  return name == "oauth-m2m" || name == "env-oidc" || name == "file-oidc" || name == "github-oidc" ||
         name == "azure-devops-oidc" || name == "external-browser" ||
         name == "runtime-oauth";
}

}  // namespace

std::unique_ptr<CredentialChain> MakeDatabricksCredentialChain(const DatabricksConfig& config) {
  std::vector<std::unique_ptr<CredentialSource>> all;
  all.push_back(std::make_unique<DatabricksPatSource>(config));
  all.push_back(std::make_unique<DatabricksBasicSource>(config));
  all.push_back(MakeDatabricksMetadataServiceSource(config));
  all.push_back(std::make_unique<DatabricksM2mSource>(config));
  all.push_back(MakeDatabricksEnvOidcSource(config));
  all.push_back(MakeDatabricksFileOidcSource(config));
  all.push_back(MakeDatabricksGithubOidcSource(config));
  all.push_back(MakeDatabricksAzureClientSecretSource(config));
  all.push_back(MakeDatabricksGithubOidcAzureSource(config));
  all.push_back(MakeDatabricksAzureCliSource(config));
  all.push_back(MakeDatabricksAzureDevopsOidcSource(config));
  all.push_back(MakeDatabricksExternalBrowserSource(config));
  all.push_back(MakeDatabricksCliSource(config));
  all.push_back(MakeDatabricksRuntimeOauthSource(config, config.auth_type == "runtime-oauth"));
  all.push_back(MakeDatabricksRuntimeSource(config, config.auth_type == "runtime"));
  all.push_back(MakeDatabricksGoogleCredentialsSource(config));
  all.push_back(MakeDatabricksGoogleIdSource(config));
  all.push_back(MakeDatabricksModelServingSource(config));
  std::vector<std::unique_ptr<CredentialSource>> sources;
  for (auto& s : all) {
    if (!config.auth_type.empty() && s->name() != config.auth_type) continue;
    if (!config.group_id.empty() && !DatabricksSupportsGroup(s->name())) {
      s = std::make_unique<DatabricksNoGroupSource>(s->name(), !config.auth_type.empty());
    }
    sources.push_back(std::move(s));
  }
  return std::make_unique<CredentialChain>("Databricks credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> DatabricksSharedCredential(const DatabricksConfig& config) {
  const std::string material = "databricks\n" + config.host + "\n" + config.token + "\n" +
                               config.client_id + "\n" + config.client_secret + "\n" +
                               config.username + "\n" + config.discovery_url + "\n" +
                               config.auth_type + "\n" + config.azure_client_id + "\n" +
                               config.azure_client_secret + "\n" + config.azure_tenant_id + "\n" +
                               config.azure_workspace_resource_id + "\n" + config.token_audience + "\n" + config.account_id + "\n" +
                               config.oidc_token_env + "\n" + config.oidc_token_filepath + "\n" +
                               config.google_credentials + "\n" + config.google_service_account + "\n" +
                               config.scopes + "\n" + config.metadata_service_url + "\n" +
                               config.databricks_cli_path + "\n" + config.profile + "\n" +
                               config.group_id + "\n" + config.authorization_details + "\n" +
                               // What the environment gives strategies beyond the config (hashed).
                               GetEnv(config.oidc_token_env.empty() ? "DATABRICKS_OIDC_TOKEN"
                                                                    : config.oidc_token_env.c_str())
                                   .value_or("") + "\n" +
                               GetEnv("ACTIONS_ID_TOKEN_REQUEST_URL").value_or("") + "\n" +
                               GetEnv("SYSTEM_ACCESSTOKEN").value_or("") + "\n" +
                               GetEnv("SYSTEM_TEAMFOUNDATIONCOLLECTIONURI").value_or("") + "\n" +
                               GetEnv("SYSTEM_JOBID").value_or("") + "\n" +
                               GetEnv("SLUICE_AZURE_CLI").value_or("") + "\n" +
                               GetEnv("PATH").value_or("") + "\n" +
                               GetEnv("SLUICE_DATABRICKS_ENTRA_ENDPOINT").value_or("") + "\n" +
                               GetEnv("SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT").value_or("") + "\n" +
                               GetEnv("GOOGLE_APPLICATION_CREDENTIALS").value_or("") + "\n" +
                               GetEnv("DATABRICKS_RUNTIME_VERSION").value_or("") + "\n" +
                               GetEnv("IS_IN_DB_MODEL_SERVING_ENV").value_or("") + "\n" +
                               GetEnv("IS_IN_DATABRICKS_MODEL_SERVING_ENV").value_or("") + "\n" +
                               DatabricksModelServingTokenPath() + "\n" +
                               std::to_string(DatabricksRuntimeTokenGeneration());
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeDatabricksCredentialChain(config),
                                              GcsTokenOptions());
  });
}

}  // namespace sluice

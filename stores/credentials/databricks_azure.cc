#include "stores/credentials/databricks_azure.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/azure_token.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/credential_program.h"
#include "stores/credentials/databricks_oidc.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/http/url.h"
#include "stores/signing/jwt_rs256.h"

namespace sluice {
namespace {

// The Azure cloud of an Azure Databricks workspace, as the SDK tells it by
// the host's DNS zone: the application Entra ID issues the workspace's
// tokens for, and the cloud's Entra ID and service-management endpoints.
struct AzureWorkspaceCloud {
  std::string login_app;           // the token's resource
  std::string entra;               // ends with '/'
  std::string service_management;  // the management token's resource
};

std::optional<AzureWorkspaceCloud> AzureCloudOf(const std::string& host) {
  static constexpr char kDatabricksApp[] = "2ff814a6-3304-4ab8-85cb-cd0e6f879c1d";
  static constexpr char kPublicEntra[] = "https://login.microsoftonline.com/";
  static constexpr char kPublicManagement[] = "https://management.core.windows.net/";
  // The SDK's order: the dev and staging zones before the one they end with.
  static const std::vector<std::pair<std::string, AzureWorkspaceCloud>> zones = {
      {".dev.azuredatabricks.net", {"62a912ac-b58e-4c1d-89ea-b2dbfc7358fc", kPublicEntra, kPublicManagement}},
      {".staging.azuredatabricks.net", {"4a67d088-db5c-48f1-9ff2-0aace800ae68", kPublicEntra, kPublicManagement}},
      {".azuredatabricks.net", {kDatabricksApp, kPublicEntra, kPublicManagement}},
      {".databricks.azure.us",
       {kDatabricksApp, "https://login.microsoftonline.us/", "https://management.core.usgovcloudapi.net/"}},
      {".databricks.azure.cn",
       {kDatabricksApp, "https://login.chinacloudapi.cn/", "https://management.core.chinacloudapi.cn/"}},
  };
  // A private cloud's Entra ID, or a test's loopback fake of it: the
  // workspace is then taken to be on Azure's public cloud otherwise.
  if (auto entra = GetEnv("SLUICE_DATABRICKS_ENTRA_ENDPOINT"); entra && !entra->empty()) {
    std::string e = *entra;
    if (e.back() != '/') e += '/';
    return AzureWorkspaceCloud{kDatabricksApp, e, kPublicManagement};
  }
  for (const auto& [zone, cloud] : zones) {
    if (host.ends_with(zone)) return cloud;
  }
  return std::nullopt;
}

// The error of an Azure service principal's strategy on a host that is no
// Azure Databricks workspace.
Status NotAnAzureWorkspace(const DatabricksConfig& config) {
  return InvalidArgumentError("an Azure service principal (from " + DatabricksSettingOrigin(config, "azure_client_id") +
                              ") signs in to an Azure Databricks workspace, and " + config.host +
                              " is not one (*.azuredatabricks.net, *.databricks.azure.us, *.databricks.azure.cn)");
}

// ARM_TENANT_ID, else the tenant the workspace's login page redirects to
// (https://login.../<tenant>/oauth2/authorize...), as the SDK finds it.
Result<std::string> AzureWorkspaceTenant(const DatabricksConfig& config) {
  if (!config.azure_tenant_id.empty()) return config.azure_tenant_id;
  const std::string url = config.host + "/aad/auth";
  HttpRequest req;
  req.url = url;
  HttpClientOptions options = GoogleEndpointOptions();
  options.follow_redirects = false;
  auto resp = SendBlocking(std::move(req), options);
  std::string why;
  if (!resp.ok()) {
    why = resp.status().message();
  } else if (resp->status / 100 != 3) {
    why = RedactUrl(url) + " answered HTTP " + std::to_string(resp->status) +
          ", not a redirect to the tenant's sign-in";
  } else {
    auto location = ParseUrl(resp->Header("location"));
    const std::string path = location.ok() ? location->target.substr(0, location->target.find('?')) : "";
    const size_t end = path.find('/', 1);
    const std::string tenant = path.size() > 1 ? path.substr(1, end == std::string::npos ? end : end - 1) : "";
    if (!tenant.empty()) return tenant;
    why = RedactUrl(url) + " redirects to no tenant's sign-in";
  }
  return PermissionDeniedError("the Azure tenant of " + config.host + " is unknown: set ARM_TENANT_ID (" + why +
                               ")");
}

// An Azure service principal's client secret, exchanged with Entra ID (v1
// endpoint, the client's id and secret in the form) for two tokens as the
// SDK's azure-client-secret strategy does: the workspace's, sent as the
// bearer, and the cloud's service-management one, sent as
// X-Databricks-Azure-SP-Management-Token (with the workspace's resource id
// when configured).
class DatabricksAzureClientSecretSource final : public CredentialSource {
 public:
  explicit DatabricksAzureClientSecretSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "azure-client-secret"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.azure_client_id.empty() || config_.azure_client_secret.empty()) {
      return NotFoundError(config_.azure_client_id.empty()
                               ? "no Azure client id (ARM_CLIENT_ID)"
                               : "an Azure client id but no client secret (ARM_CLIENT_SECRET)");
    }
    if (config_.host.empty()) {
      if (!config_.azure_workspace_resource_id.empty()) {
        return UnimplementedError("finding the workspace from its Azure resource id (from " +
                                  DatabricksSettingOrigin(config_, "azure_workspace_resource_id") +
                                  ") is not supported; set DATABRICKS_HOST");
      }
      return NotFoundError("Azure client credentials but no host (DATABRICKS_HOST)");
    }
    const std::optional<AzureWorkspaceCloud> cloud = AzureCloudOf(config_.host);
    if (!cloud) return NotAnAzureWorkspace(config_);
    SLUICE_ASSIGN_OR_RETURN(std::string tenant, AzureWorkspaceTenant(config_));
    const std::string token_url = cloud->entra + tenant + "/oauth2/token";
    SLUICE_ASSIGN_OR_RETURN(AccessToken workspace, Token(token_url, cloud->login_app));
    SLUICE_ASSIGN_OR_RETURN(AccessToken management, Token(token_url, cloud->service_management));
    const int64_t expires_in = std::min(workspace.expires_in, management.expires_in);
    Credential out = BearerCredential("Azure service principal " + config_.azure_client_id + " of tenant " +
                                          tenant + " (from " + DatabricksSettingOrigin(config_, "azure_client_id") + ")",
                                      AccessToken{std::move(workspace.token), expires_in}, now);
    out.headers.emplace_back("x-databricks-azure-sp-management-token", std::move(management.token));
    if (!config_.azure_workspace_resource_id.empty()) {
      out.headers.emplace_back("x-databricks-azure-workspace-resource-id", config_.azure_workspace_resource_id);
    }
    return out;
  }

 private:
  Result<AccessToken> Token(const std::string& token_url, const std::string& resource) const {
    return RequestDatabricksToken(token_url,
                                  {{"grant_type", "client_credentials"},
                                   {"scope", DatabricksScopes(config_)},
                                   {"resource", resource},
                                   {"client_id", config_.azure_client_id},
                                   {"client_secret", config_.azure_client_secret}},
                                  "Entra ID token request for Azure client " + config_.azure_client_id +
                                      " (resource " + resource + ")");
  }

  DatabricksConfig config_;
};

// GitHub Actions' ID token (audience api://AzureADTokenExchange) as the
// client assertion of an Azure service principal's federated credential,
// exchanged with Entra ID's v1 endpoint for the workspace's token, as the
// SDK's github-oidc-azure strategy does (no management token). The tenant:
// ARM_TENANT_ID, else the one the workspace's
// {host}/oidc/oauth2/v2.0/authorize redirects to.
class DatabricksGithubOidcAzureSource final : public CredentialSource {
 public:
  explicit DatabricksGithubOidcAzureSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "github-oidc-azure"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.host.empty()) return NotFoundError("no host (DATABRICKS_HOST)");
    if (config_.azure_client_id.empty()) return NotFoundError("no Azure client id (ARM_CLIENT_ID)");
    if (!GetEnv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")) {
      return NotFoundError("not in GitHub Actions (ACTIONS_ID_TOKEN_REQUEST_TOKEN)");
    }
    const std::optional<AzureWorkspaceCloud> cloud = AzureCloudOf(config_.host);
    if (!cloud) return NotAnAzureWorkspace(config_);
    SLUICE_ASSIGN_OR_RETURN(std::string assertion, GithubActionsIdToken("api://AzureADTokenExchange"));
    SLUICE_ASSIGN_OR_RETURN(std::string tenant, Tenant(*cloud));
    SLUICE_ASSIGN_OR_RETURN(
        AccessToken token,
        RequestDatabricksToken(cloud->entra + tenant + "/oauth2/token",
                               {{"grant_type", "client_credentials"},
                                {"scope", DatabricksScopes(config_)},
                                {"authorization_details", config_.authorization_details},
                                {"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
                                {"resource", cloud->login_app},
                                {"client_assertion", std::move(assertion)},
                                {"client_id", config_.azure_client_id}},
                               "Entra ID token request for Azure client " + config_.azure_client_id +
                                   " (GitHub Actions' ID token)"));
    return BearerCredential("GitHub Actions' ID token for Azure client " + config_.azure_client_id + " of tenant " +
                                tenant + " (from " + DatabricksSettingOrigin(config_, "azure_client_id") + ")",
                            std::move(token), now);
  }

 private:
  Result<std::string> Tenant(const AzureWorkspaceCloud& cloud) const {
    if (!config_.azure_tenant_id.empty()) return config_.azure_tenant_id;
    const std::string url = config_.host + "/oidc/oauth2/v2.0/authorize";
    HttpRequest req;
    req.url = url;
    HttpClientOptions options = GoogleEndpointOptions();
    options.follow_redirects = false;
    auto resp = SendBlocking(std::move(req), options);
    if (resp.ok()) {
      const std::string location = resp->Header("location");
      if (location.starts_with(cloud.entra)) {
        std::string tenant = location.substr(cloud.entra.size());
        tenant = tenant.substr(0, tenant.find('/'));
        if (!tenant.empty()) return tenant;
      }
    }
    return PermissionDeniedError("the Azure tenant of " + config_.host + " is unknown: set ARM_TENANT_ID (" +
                                 RedactUrl(url) + " " +
                                 (resp.ok() ? "redirects to no sign-in of " + cloud.entra : resp.status().message()) +
                                 ")");
  }

  DatabricksConfig config_;
};


// As azure-identity's default process timeout (azure_cli_source.cc); the
// SDK waits for ever.
constexpr int64_t kDatabricksAzureCliTimeoutMs = 10000;

// The Azure CLI's tokens for an Azure Databricks workspace, asked for as
// the SDK's azure-cli strategy asks (header comment).
class DatabricksAzureCliSource final : public CredentialSource {
 public:
  explicit DatabricksAzureCliSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "azure-cli"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.host.empty()) return NotFoundError("no host (DATABRICKS_HOST)");
    const std::optional<AzureWorkspaceCloud> cloud = AzureCloudOf(config_.host);
    if (!cloud) return NotFoundError(config_.host + " is not an Azure Databricks workspace");
    SLUICE_ASSIGN_OR_RETURN(program_, FindLoginProgram("SLUICE_AZURE_CLI", "az"));
    // The SDK looks the tenant up and, finding none, goes on without it.
    auto tenant = AzureWorkspaceTenant(config_);
    tenant_ = tenant.ok() ? *tenant : "";
    SLUICE_ASSIGN_OR_RETURN(Credential workspace, Token(cloud->login_app, now));
    // A user's token (a "upn" claim) is all; a service principal's login
    // also sends the management token when the CLI gives one.
    std::optional<std::string> claims = JwtClaimsText(workspace.bearer);
    auto parsed = claims ? ParsePyJson(*claims) : Result<JsonValue>(InvalidArgumentError("not a JWT"));
    const bool user = parsed.ok() && JsonMember(*parsed, "upn") != nullptr;
    Credential out;
    out.source = "Azure CLI login (" + program_ + " account get-access-token" +
                 (tenant_.empty() ? std::string() : ", tenant " + tenant_) + ")";
    out.bearer = std::move(workspace.bearer);
    out.expires_at = workspace.expires_at;
    if (!user) {
      if (auto management = Token(cloud->service_management, now); management.ok()) {
        out.expires_at = std::min(*out.expires_at, management->expires_at.value_or(*out.expires_at));
        out.headers.emplace_back("x-databricks-azure-sp-management-token", std::move(management->bearer));
      }
    }
    if (!config_.azure_workspace_resource_id.empty()) {
      out.headers.emplace_back("x-databricks-azure-workspace-resource-id", config_.azure_workspace_resource_id);
    }
    return out;
  }

 private:
  // The token for `resource`: with the workspace's subscription first when
  // its resource id names one (a user may reach the workspace and not the
  // subscription: then without), as the SDK's for_resource does.
  Result<Credential> Token(const std::string& resource, int64_t now) const {
    const std::string subscription = Subscription();
    if (!subscription.empty()) {
      if (auto got = Run(resource, subscription, now); got.ok()) return got;
    }
    return Run(resource, "", now);
  }

  Result<Credential> Run(const std::string& resource, const std::string& subscription, int64_t now) const {
    std::vector<std::string> argv = {program_, "account", "get-access-token", "--resource", resource,
                                     "--output", "json"};
    if (!subscription.empty()) argv.insert(argv.end(), {"--subscription", subscription});
    if (!tenant_.empty() && !SignedInAsManagedIdentity()) argv.insert(argv.end(), {"--tenant", tenant_});
    const std::string what = "'" + program_ + " account get-access-token'";
    std::string errors;
    Result<std::string> out = RunCredentialProgram(argv, {}, kDatabricksAzureCliTimeoutMs, &errors);
    if (!out.ok()) {
      // As the SDK: a CLI that fails (signed out, no access) is skipped.
      const std::string line = FirstErrorLine(errors);
      return NotFoundError(what + " for " + resource + ": " + out.status().message() +
                           (line.empty() ? "" : ": " + line));
    }
    return ParseAzureCliToken(*out, now, what);
  }

  // The SDK passes no --tenant to a CLI signed in as a managed identity
  // (the CLI refuses it then), asking `az account show`.
  bool SignedInAsManagedIdentity() const {
    std::string errors;  // kept from the user's terminal: the answer is only a hint
    auto out = RunCredentialProgram({program_, "account", "show", "--output", "json"}, {},
                                    kDatabricksAzureCliTimeoutMs, &errors);
    if (!out.ok()) return false;
    auto account = ParsePyJson(*out);
    const JsonValue* user = account.ok() ? JsonMember(*account, "user") : nullptr;
    if (user == nullptr) return false;
    const std::string name = JsonStringMember(*user, "name");
    return JsonStringMember(*user, "type") == "servicePrincipal" &&
           (name == "systemAssignedIdentity" || name == "userAssignedIdentity");
  }

  // The subscription of /subscriptions/<id>/resourceGroups/... (the
  // resource id's third '/'-separated part), "" when none.
  std::string Subscription() const {
    const std::string& id = config_.azure_workspace_resource_id;
    size_t begin = 0;
    for (int part = 0; part < 2; ++part) {
      begin = id.find('/', begin);
      if (begin == std::string::npos) return "";
      ++begin;
    }
    return id.substr(begin, id.find('/', begin) - begin);
  }

  DatabricksConfig config_;
  std::string program_;
  std::string tenant_;
};

}  // namespace

std::unique_ptr<CredentialSource> MakeDatabricksAzureClientSecretSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksAzureClientSecretSource>(config);
}

std::unique_ptr<CredentialSource> MakeDatabricksGithubOidcAzureSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksGithubOidcAzureSource>(config);
}

std::unique_ptr<CredentialSource> MakeDatabricksAzureCliSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksAzureCliSource>(config);
}

}  // namespace sluice

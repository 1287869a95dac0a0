#include "stores/credentials/databricks_credential.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "stores/common/store_keys.h"

#include "formats/json/py_json.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/http/url.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

// "token from DATABRICKS_TOKEN", "client secret from profile X of F".
std::string From(const DatabricksConfig& config, const std::string& setting) {
  auto it = config.origin.find(setting);
  return it == config.origin.end() ? std::string("?") : it->second;
}

class DatabricksPatSource final : public CredentialSource {
 public:
  explicit DatabricksPatSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "pat"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    if (config_.token.empty()) return NotFoundError("no token (DATABRICKS_TOKEN)");
    if (config_.host.empty()) return NotFoundError("a token but no host (DATABRICKS_HOST)");
    Credential out;
    out.source = "personal access token from " + From(config_, "token");
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
        From(config_, config_.username.empty() ? "password" : "username") +
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
    SLUICE_ASSIGN_OR_RETURN(std::string token_endpoint, TokenEndpoint());
    HttpRequest req;
    req.method = HttpMethod::kPost;
    req.url = token_endpoint;
    req.headers.emplace_back("authorization",
                             "Basic " + Base64Encode(config_.client_id + ":" + config_.client_secret));
    req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
    req.body = FormBody({{"grant_type", "client_credentials"}, {"scope", "all-apis"}});
    auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
    if (!resp.ok()) {
      return Status(resp.status().code() == StatusCode::kNotFound ||
                            resp.status().code() == StatusCode::kIoError
                        ? StatusCode::kPermissionDenied
                        : resp.status().code(),
                    "token request for client " + config_.client_id + " to " +
                        RedactUrl(token_endpoint) + " failed: " + resp.status().message());
    }
    SLUICE_ASSIGN_OR_RETURN(AccessToken token,
                            ParseAccessTokenResponse(resp->body, RedactUrl(token_endpoint)));
    return BearerCredential("OAuth M2M for client " + config_.client_id + " (from " +
                                From(config_, "client_id") + ")",
                            std::move(token), now);
  }

 private:
  // The OIDC discovery document's URL, as the SDK finds it: the setting,
  // else from the host's metadata (/.well-known/databricks-config,
  // "oidc_endpoint" with its {account_id}), else the workspace's own
  // {host}/oidc (what that metadata says for a workspace).
  std::string DiscoveryUrl() const {
    if (!config_.discovery_url.empty()) return config_.discovery_url;
    std::string oidc = config_.host + "/oidc";
    HttpRequest req;
    req.url = config_.host + "/.well-known/databricks-config";
    auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
    if (resp.ok()) {
      auto json = ParsePyJson(resp->body);
      std::string endpoint = json.ok() ? JsonStringMember(*json, "oidc_endpoint") : "";
      const std::string account = json.ok() ? JsonStringMember(*json, "account_id") : "";
      if (size_t at = endpoint.find("{account_id}"); at != std::string::npos) {
        endpoint = account.empty() ? "" : endpoint.replace(at, 12, account);
      }
      while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
      if (!endpoint.empty() && ParseUrl(endpoint).ok()) oidc = endpoint;
    }
    return oidc + "/.well-known/oauth-authorization-server";
  }

  // The token endpoint OIDC discovery names.
  Result<std::string> TokenEndpoint() const {
    const std::string url = DiscoveryUrl();
    HttpRequest req;
    req.url = url;
    auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
    if (!resp.ok()) {
      return PermissionDeniedError("OIDC discovery at " + RedactUrl(url) +
                                   " failed: " + resp.status().message());
    }
    auto json = ParsePyJson(resp->body);
    std::string endpoint = json.ok() ? JsonStringMember(*json, "token_endpoint") : "";
    if (endpoint.empty() || !ParseUrl(endpoint).ok()) {
      return PermissionDeniedError("OIDC discovery at " + RedactUrl(url) +
                                   " names no token_endpoint URL");
    }
    return endpoint;
  }

  DatabricksConfig config_;
};

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
                                  From(config_, "azure_workspace_resource_id") +
                                  ") is not supported; set DATABRICKS_HOST");
      }
      return NotFoundError("Azure client credentials but no host (DATABRICKS_HOST)");
    }
    const std::optional<AzureWorkspaceCloud> cloud = AzureCloudOf(config_.host);
    if (!cloud) {
      return InvalidArgumentError("an Azure service principal (from " + From(config_, "azure_client_id") +
                                  ") signs in to an Azure Databricks workspace, and " + config_.host +
                                  " is not one (*.azuredatabricks.net, *.databricks.azure.us, "
                                  "*.databricks.azure.cn)");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string tenant, Tenant());
    const std::string token_url = cloud->entra + tenant + "/oauth2/token";
    SLUICE_ASSIGN_OR_RETURN(AccessToken workspace, Token(token_url, cloud->login_app));
    SLUICE_ASSIGN_OR_RETURN(AccessToken management, Token(token_url, cloud->service_management));
    const int64_t expires_in = std::min(workspace.expires_in, management.expires_in);
    Credential out = BearerCredential("Azure service principal " + config_.azure_client_id + " of tenant " +
                                          tenant + " (from " + From(config_, "azure_client_id") + ")",
                                      AccessToken{std::move(workspace.token), expires_in}, now);
    out.headers.emplace_back("x-databricks-azure-sp-management-token", std::move(management.token));
    if (!config_.azure_workspace_resource_id.empty()) {
      out.headers.emplace_back("x-databricks-azure-workspace-resource-id", config_.azure_workspace_resource_id);
    }
    return out;
  }

 private:
  // ARM_TENANT_ID, else the tenant the workspace's login page redirects to
  // (https://login.../<tenant>/oauth2/authorize...), as the SDK finds it.
  Result<std::string> Tenant() const {
    if (!config_.azure_tenant_id.empty()) return config_.azure_tenant_id;
    const std::string url = config_.host + "/aad/auth";
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
    return PermissionDeniedError("the Azure tenant of " + config_.host + " is unknown: set ARM_TENANT_ID (" + why +
                                 ")");
  }

  Result<AccessToken> Token(const std::string& token_url, const std::string& resource) const {
    HttpRequest req;
    req.method = HttpMethod::kPost;
    req.url = token_url;
    req.headers.emplace_back("content-type", "application/x-www-form-urlencoded");
    req.body = FormBody({{"grant_type", "client_credentials"},
                         {"scope", "all-apis"},
                         {"resource", resource},
                         {"client_id", config_.azure_client_id},
                         {"client_secret", config_.azure_client_secret}});
    auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
    if (!resp.ok()) {
      return Status(resp.status().code() == StatusCode::kNotFound || resp.status().code() == StatusCode::kIoError
                        ? StatusCode::kPermissionDenied
                        : resp.status().code(),
                    "Entra ID token request for Azure client " + config_.azure_client_id + " (resource " +
                        resource + ") to " + RedactUrl(token_url) + " failed: " + resp.status().message());
    }
    return ParseAccessTokenResponse(resp->body, RedactUrl(token_url));
  }

  DatabricksConfig config_;
};

}  // namespace

std::unique_ptr<CredentialChain> MakeDatabricksCredentialChain(const DatabricksConfig& config) {
  std::vector<std::unique_ptr<CredentialSource>> all;
  all.push_back(std::make_unique<DatabricksPatSource>(config));
  all.push_back(std::make_unique<DatabricksBasicSource>(config));
  all.push_back(std::make_unique<DatabricksM2mSource>(config));
  all.push_back(std::make_unique<DatabricksAzureClientSecretSource>(config));
  std::vector<std::unique_ptr<CredentialSource>> sources;
  for (auto& s : all) {
    if (config.auth_type.empty() || s->name() == config.auth_type) sources.push_back(std::move(s));
  }
  return std::make_unique<CredentialChain>("Databricks credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> DatabricksSharedCredential(const DatabricksConfig& config) {
  const std::string material = "databricks\n" + config.host + "\n" + config.token + "\n" +
                               config.client_id + "\n" + config.client_secret + "\n" +
                               config.username + "\n" + config.discovery_url + "\n" +
                               config.auth_type + "\n" + config.azure_client_id + "\n" +
                               config.azure_client_secret + "\n" + config.azure_tenant_id + "\n" +
                               config.azure_workspace_resource_id + "\n" +
                               GetEnv("SLUICE_DATABRICKS_ENTRA_ENDPOINT").value_or("");
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeDatabricksCredentialChain(config),
                                              GcsTokenOptions());
  });
}

}  // namespace sluice

#include "stores/credentials/databricks_credential.h"

#include <utility>
#include <vector>

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

}  // namespace

std::unique_ptr<CredentialChain> MakeDatabricksCredentialChain(const DatabricksConfig& config) {
  std::vector<std::unique_ptr<CredentialSource>> all;
  all.push_back(std::make_unique<DatabricksPatSource>(config));
  all.push_back(std::make_unique<DatabricksBasicSource>(config));
  all.push_back(std::make_unique<DatabricksM2mSource>(config));
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
                               config.auth_type;
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeDatabricksCredentialChain(config),
                                              GcsTokenOptions());
  });
}

}  // namespace sluice

#include "stores/credentials/databricks_oidc.h"

#include <functional>
#include <optional>
#include <utility>
#include <variant>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

// An ID token is a JWT of a few KiB; this only caps a hostile file.
constexpr uint64_t kMaxIdTokenFile = uint64_t{1} << 16;

// What the host's metadata (/.well-known/databricks-config) settles, as
// the SDK's Config resolves it: the OIDC discovery document's URL (the
// setting, else the metadata's "oidc_endpoint" with its {account_id} (the
// setting's, else the metadata's), else the workspace's own {host}/oidc),
// and the audience of ID tokens asked for (the setting, else the metadata's
// first token_federation_default_oidc_audiences, else on an account host
// (no "workspace_id") the account id; "" = the token endpoint).
struct DatabricksOidcSettings {
  std::string discovery_url;
  std::string token_audience;
};

Result<DatabricksOidcSettings> ResolveDatabricksOidcSettings(const DatabricksConfig& config) {
  DatabricksOidcSettings out{config.discovery_url, config.token_audience};
  std::string oidc = config.host + "/oidc";
  HttpRequest req;
  req.url = config.host + "/.well-known/databricks-config";
  auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
  auto json = resp.ok() ? ParsePyJson(resp->body) : Result<JsonValue>(resp.status());
  if (json.ok()) {
    const std::string account =
        !config.account_id.empty() ? config.account_id : JsonStringMember(*json, "account_id");
    std::string endpoint = JsonStringMember(*json, "oidc_endpoint");
    if (size_t at = endpoint.find("{account_id}"); at != std::string::npos) {
      if (account.empty() && out.discovery_url.empty()) {
        return InvalidArgumentError("the OIDC endpoint of the account host " + config.host +
                                    " needs the account id: set DATABRICKS_ACCOUNT_ID (or account_id in the "
                                    "profile)");
      }
      endpoint.replace(at, 12, account);
    }
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (!endpoint.empty() && ParseUrl(endpoint).ok()) oidc = endpoint;
    if (out.token_audience.empty()) {
      if (const JsonValue* audiences = JsonMember(*json, "token_federation_default_oidc_audiences")) {
        const auto* array = std::get_if<JsonValue::Array>(&audiences->v);
        const auto* first = array != nullptr && !array->empty() ? std::get_if<std::string>(&array->front().v)
                                                                : nullptr;
        if (first != nullptr) out.token_audience = *first;
      }
    }
    if (out.token_audience.empty() && JsonMember(*json, "workspace_id") == nullptr) out.token_audience = account;
  }
  if (out.discovery_url.empty()) out.discovery_url = oidc + "/.well-known/oauth-authorization-server";
  return out;
}

Result<std::string> TokenEndpointAt(const std::string& url) {
  HttpRequest req;
  req.url = url;
  auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
  if (!resp.ok()) {
    return PermissionDeniedError("OIDC discovery at " + RedactUrl(url) + " failed: " + resp.status().message());
  }
  auto json = ParsePyJson(resp->body);
  std::string endpoint = json.ok() ? JsonStringMember(*json, "token_endpoint") : "";
  if (endpoint.empty() || !ParseUrl(endpoint).ok()) {
    return PermissionDeniedError("OIDC discovery at " + RedactUrl(url) + " names no token_endpoint URL");
  }
  return endpoint;
}

// The audience an ID token is asked for, computed only when asked for (it
// may need OIDC discovery).
using IdTokenAudience = std::function<Result<std::string>()>;
// Where an ID token comes from: the token (a secret), or kNotFound saying
// why the strategy does not apply.
using IdTokenSupplier = std::function<Result<std::string>(const IdTokenAudience& audience)>;

// Exchanges an ID token for a Databricks token at the host's token endpoint,
// as the SDK's DatabricksOidcTokenSource (env-oidc, file-oidc) and its
// generic OIDC provider (github-oidc) do: no client authentication, the
// token-exchange grant in the form the SDK posts (its fields in its order).
class DatabricksOidcSource final : public CredentialSource {
 public:
  DatabricksOidcSource(DatabricksConfig config, std::string name, std::string id_token_from,
                       bool needs_client_id, IdTokenSupplier supplier)
      : config_(std::move(config)),
        name_(std::move(name)),
        id_token_from_(std::move(id_token_from)),
        needs_client_id_(needs_client_id),
        supplier_(std::move(supplier)) {}
  std::string name() const override { return name_; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.host.empty()) return NotFoundError("no host (DATABRICKS_HOST)");
    if (needs_client_id_ && config_.client_id.empty()) {
      return NotFoundError("no client id (DATABRICKS_CLIENT_ID)");
    }
    // The ID token first, so that a missing one leaves the strategy out
    // before any request (GitHub's environment is checked before its
    // audience, by default the token endpoint, is discovered).
    std::string endpoint;
    std::optional<DatabricksOidcSettings> settings;
    const IdTokenAudience audience = [&]() -> Result<std::string> {
      SLUICE_ASSIGN_OR_RETURN(settings, ResolveDatabricksOidcSettings(config_));
      if (!settings->token_audience.empty()) return settings->token_audience;
      SLUICE_ASSIGN_OR_RETURN(endpoint, TokenEndpointAt(settings->discovery_url));
      return endpoint;
    };
    SLUICE_ASSIGN_OR_RETURN(std::string id_token, supplier_(audience));
    if (!settings) {
      SLUICE_ASSIGN_OR_RETURN(settings, ResolveDatabricksOidcSettings(config_));
    }
    if (endpoint.empty()) {
      SLUICE_ASSIGN_OR_RETURN(endpoint, TokenEndpointAt(settings->discovery_url));
    }
    std::vector<std::pair<std::string, std::string>> form = {
        {"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
        {"scope", DatabricksScopes(config_)},
        {"authorization_details", config_.authorization_details},  // empty ones are left out
        {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
        {"subject_token", std::move(id_token)},
        {"assume_group", config_.group_id},
        {"client_id", config_.client_id}};  // left out when empty (account-wide federation)
    const std::string who = config_.client_id.empty() ? std::string("the account")
                                                      : "client " + config_.client_id;
    SLUICE_ASSIGN_OR_RETURN(AccessToken token,
                            RequestDatabricksToken(endpoint, form, "token exchange for " + who));
    return BearerCredential(
        "OIDC token federation of " + who + " (ID token from " + id_token_from_ + ")", std::move(token), now);
  }

 private:
  DatabricksConfig config_;
  std::string name_;
  std::string id_token_from_;
  bool needs_client_id_;
  IdTokenSupplier supplier_;
};

}  // namespace

Result<std::string> DatabricksTokenEndpoint(const DatabricksConfig& config) {
  SLUICE_ASSIGN_OR_RETURN(DatabricksOidcSettings settings, ResolveDatabricksOidcSettings(config));
  return TokenEndpointAt(settings.discovery_url);
}

Result<AccessToken> RequestDatabricksToken(const std::string& endpoint,
                                           const std::vector<std::pair<std::string, std::string>>& fields,
                                           const std::string& what,
                                           std::vector<std::pair<std::string, std::string>> headers) {
  const std::string where = RedactUrl(endpoint);
  SLUICE_ASSIGN_OR_RETURN(HttpResponse resp,
                          PostToGoogle(endpoint, FormBody(fields), what + " to " + where, std::move(headers)));
  return ParseAccessTokenResponse(resp.body, where);
}

std::unique_ptr<CredentialSource> MakeDatabricksEnvOidcSource(const DatabricksConfig& config) {
  const std::string variable = config.oidc_token_env.empty() ? "DATABRICKS_OIDC_TOKEN" : config.oidc_token_env;
  return std::make_unique<DatabricksOidcSource>(
      config, "env-oidc", variable, /*needs_client_id=*/false,
      [variable](const IdTokenAudience&) -> Result<std::string> {
        auto token = GetEnv(variable.c_str());
        if (!token) return NotFoundError("no ID token in " + variable);
        return *token;
      });
}

std::unique_ptr<CredentialSource> MakeDatabricksFileOidcSource(const DatabricksConfig& config) {
  const std::string path = config.oidc_token_filepath;
  return std::make_unique<DatabricksOidcSource>(
      config, "file-oidc", path, /*needs_client_id=*/false,
      [path](const IdTokenAudience&) -> Result<std::string> {
        if (path.empty()) return NotFoundError("no ID token file (DATABRICKS_OIDC_TOKEN_FILEPATH)");
        // As the SDK: a file that is missing, unreadable or empty leaves
        // the strategy out (the reason is kept for the chain's message).
        auto text = ReadFile(path, kMaxIdTokenFile);
        if (!text.ok()) return NotFoundError("cannot read the ID token file " + path + ": " + text.status().message());
        std::string token = *text;
        const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
        while (!token.empty() && blank(token.back())) token.pop_back();
        size_t start = 0;
        while (start < token.size() && blank(token[start])) ++start;
        token.erase(0, start);
        if (token.empty()) return NotFoundError("the ID token file " + path + " is empty");
        return token;
      });
}

Result<std::string> GithubActionsIdToken(const std::string& audience) {
  auto url = GetEnv("ACTIONS_ID_TOKEN_REQUEST_URL");
  auto bearer = GetEnv("ACTIONS_ID_TOKEN_REQUEST_TOKEN");
  if (!url || !bearer) {
    return NotFoundError("not in GitHub Actions (ACTIONS_ID_TOKEN_REQUEST_URL, ACTIONS_ID_TOKEN_REQUEST_TOKEN)");
  }
  // The URL already has a query; the SDK appends the audience as is.
  HttpRequest req;
  req.url = *url + "&audience=" + audience;
  req.headers.emplace_back("authorization", "Bearer " + *bearer);
  auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
  // As the SDK: no ID token from GitHub leaves the strategy out.
  if (!resp.ok()) return NotFoundError("GitHub Actions gave no ID token: " + resp.status().message());
  auto json = ParsePyJson(resp->body);
  std::string token = json.ok() ? JsonStringMember(*json, "value") : "";
  if (token.empty()) {
    return NotFoundError("GitHub Actions' ID token endpoint " + RedactUrl(*url) + " answered no \"value\"");
  }
  return token;
}

std::unique_ptr<CredentialSource> MakeDatabricksGithubOidcSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksOidcSource>(
      config, "github-oidc", "GitHub Actions", /*needs_client_id=*/true,
      [](const IdTokenAudience& audience_of) -> Result<std::string> {
        if (!GetEnv("ACTIONS_ID_TOKEN_REQUEST_URL") || !GetEnv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")) {
          return GithubActionsIdToken("");  // says why, asking nothing
        }
        SLUICE_ASSIGN_OR_RETURN(const std::string audience, audience_of());
        return GithubActionsIdToken(audience);
      });
}

std::unique_ptr<CredentialSource> MakeDatabricksAzureDevopsOidcSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksOidcSource>(
      config, "azure-devops-oidc", "Azure DevOps", /*needs_client_id=*/true,
      [](const IdTokenAudience&) -> Result<std::string> {
        // The pipeline's predefined variables; Azure DevOps fixes the ID
        // token's audience (api://AzureADTokenExchange), so none is asked for.
        static constexpr const char* kNames[] = {"SYSTEM_ACCESSTOKEN", "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI",
                                                 "SYSTEM_TEAMPROJECTID", "SYSTEM_PLANID", "SYSTEM_JOBID",
                                                 "SYSTEM_HOSTTYPE"};
        std::vector<std::string> values;
        std::string missing;
        for (const char* name : kNames) {
          values.push_back(GetEnv(name).value_or(""));
          if (values.back().empty()) missing += (missing.empty() ? "" : ", ") + std::string(name);
        }
        if (values[0].empty()) return NotFoundError("not in an Azure DevOps pipeline (no SYSTEM_ACCESSTOKEN)");
        if (!missing.empty()) return NotFoundError("an Azure DevOps pipeline without " + missing);
        // {collection}{project}/_apis/distributedtask/hubs/{hub}/plans/{plan}/jobs/{job}/oidctoken,
        // POSTed with an empty body as the SDK does.
        const std::string url = values[1] + values[2] + "/_apis/distributedtask/hubs/" + values[5] + "/plans/" +
                                values[3] + "/jobs/" + values[4] + "/oidctoken?api-version=7.2-preview.1";
        auto resp = PostToGoogle(url, "", "Azure DevOps' ID token request", {{"authorization", "Bearer " + values[0]}},
                                 "application/json");
        // As the SDK: no ID token from Azure DevOps leaves the strategy out.
        if (!resp.ok()) return NotFoundError("Azure DevOps gave no ID token: " + resp.status().message());
        auto json = ParsePyJson(resp->body);
        std::string token = json.ok() ? JsonStringMember(*json, "oidcToken") : "";
        if (token.empty()) {
          return NotFoundError("Azure DevOps' ID token endpoint " + RedactUrl(url) + " answered no \"oidcToken\"");
        }
        return token;
      });
}

}  // namespace sluice

#include "stores/credentials/databricks_external_browser.h"

#include <utility>
#include <vector>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/databricks_cli.h"
#include "stores/credentials/databricks_oidc.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

// A cached token is a few KiB; this only caps a hostile file.
constexpr uint64_t kMaxTokenCacheFile = uint64_t{1} << 20;
// The SDK counts a token expired this long before its expiry.
constexpr int64_t kExpiryLeewayS = 40;

std::string ExternalBrowserClientId(const DatabricksConfig& config) {
  return config.client_id.empty() ? std::string("databricks-cli") : config.client_id;
}

class DatabricksExternalBrowserSource final : public CredentialSource {
 public:
  explicit DatabricksExternalBrowserSource(DatabricksConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "external-browser"; }

  Result<Credential> Fetch(int64_t now) override {
    if (config_.auth_type != "external-browser") {
      return NotFoundError("only when chosen (DATABRICKS_AUTH_TYPE=external-browser)");
    }
    if (config_.host.empty()) return NotFoundError("no host (DATABRICKS_HOST)");
    if (config_.client_id.empty() && !config_.azure_client_id.empty()) {
      return UnimplementedError("external-browser with an Azure Entra ID client (ARM_CLIENT_ID) is not supported");
    }
    const std::string path = DatabricksSdkTokenCachePath(config_);
    const std::string login = "; Sluice opens no browser: run `databricks auth login --host " + config_.host +
                              "` and set DATABRICKS_AUTH_TYPE=databricks-cli";
    if (refresh_token_.empty()) {
      auto text = ReadFile(path, kMaxTokenCacheFile);
      if (!text.ok()) {
        return PermissionDeniedError("no login of the Databricks Python SDK is cached in " + path + login);
      }
      auto json = ParsePyJson(*text);
      const JsonValue* token = json.ok() ? JsonMember(*json, "token") : nullptr;
      const std::string access = token != nullptr ? JsonStringMember(*token, "access_token") : "";
      const std::optional<int64_t> expiry =
          token != nullptr ? ParseDatabricksExpiry(JsonStringMember(*token, "expiry")) : std::nullopt;
      if (access.empty() || !expiry) {
        return PermissionDeniedError("the Databricks Python SDK's token cache " + path +
                                       " holds no access_token and expiry" + login);
      }
      refresh_token_ = JsonStringMember(*token, "refresh_token");
      if (*expiry - kExpiryLeewayS > now) {
        Credential out;
        out.source = Source(path);
        out.bearer = access;
        out.expires_at = *expiry;
        return out;
      }
    }
    if (refresh_token_.empty()) {
      return PermissionDeniedError("the login cached in " + path + " has expired and has no refresh token" +
                                     login);
    }
    SLUICE_ASSIGN_OR_RETURN(std::string endpoint, DatabricksTokenEndpoint(config_));
    auto refreshed = RequestDatabricksToken(
        endpoint,
        {{"grant_type", "refresh_token"},
         {"refresh_token", refresh_token_},
         {"client_id", ExternalBrowserClientId(config_)},
         {"client_secret", config_.client_id.empty() ? std::string() : config_.client_secret}},
        "refresh of the login cached in " + path);
    if (!refreshed.ok()) return PermissionDeniedError(refreshed.status().message() + login);
    return BearerCredential(Source(path), std::move(*refreshed), now);
  }

 private:
  std::string Source(const std::string& path) const {
    return "the Databricks Python SDK's browser login of client " + ExternalBrowserClientId(config_) + " (" + path + ")";
  }

  DatabricksConfig config_;
  std::string refresh_token_;  // the cache's; a secret
};

}  // namespace

std::string DatabricksSdkTokenCachePath(const DatabricksConfig& config) {
  JsonValue::Array scopes;
  bool offline = false;
  for (const std::string& scope : SplitDatabricksScopes(DatabricksScopes(config))) {
    offline = offline || scope == "offline_access";
    scopes.push_back(JsonValue{scope});
  }
  // The SDK reads the variable as bool(text): any text disables.
  const bool refresh_disabled = !GetEnv("DATABRICKS_DISABLE_OAUTH_REFRESH_TOKEN").value_or("").empty();
  if (!offline && !refresh_disabled) scopes.push_back(JsonValue{std::string("offline_access")});
  JsonValue::Object key = {{"client_id", JsonValue{ExternalBrowserClientId(config)}},
                           {"host", JsonValue{config.host}},
                           {"profile", JsonValue{config.profile}},
                           {"scopes", JsonValue{std::move(scopes)}}};
  if (!config.group_id.empty()) key.emplace_back("group_id", JsonValue{config.group_id});
  auto text = DumpPyJson(JsonValue{std::move(key)}, /*sort_keys=*/true);
  return GetEnv("HOME").value_or("") + "/.config/databricks-sdk-py/oauth/" + Sha256Hex(text.ok() ? *text : "") +
         ".json";
}

std::unique_ptr<CredentialSource> MakeDatabricksExternalBrowserSource(const DatabricksConfig& config) {
  return std::make_unique<DatabricksExternalBrowserSource>(config);
}

}  // namespace sluice

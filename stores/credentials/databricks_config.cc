#include "stores/credentials/databricks_config.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_settings.h"
#include "stores/http/url.h"

namespace sluice {
namespace {

struct Setting {
  const char* name;   // the config file's key
  const char* env;    // the environment variable; nullptr: only the config file has it
  const char* auth;   // the kind of credential it belongs to; "" none
  std::string DatabricksConfig::*field;
  const char* alias = nullptr;  // an older name of `env`, read when it is unset
};

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> settings = {
      {"host", "DATABRICKS_HOST", "", &DatabricksConfig::host},
      {"token", "DATABRICKS_TOKEN", "pat", &DatabricksConfig::token},
      {"client_id", "DATABRICKS_CLIENT_ID", "oauth", &DatabricksConfig::client_id},
      {"client_secret", "DATABRICKS_CLIENT_SECRET", "oauth", &DatabricksConfig::client_secret},
      {"username", "DATABRICKS_USERNAME", "basic", &DatabricksConfig::username},
      {"password", "DATABRICKS_PASSWORD", "basic", &DatabricksConfig::password},
      {"discovery_url", "DATABRICKS_DISCOVERY_URL", "", &DatabricksConfig::discovery_url},
      {"auth_type", "DATABRICKS_AUTH_TYPE", "", &DatabricksConfig::auth_type},
      {"token_audience", "DATABRICKS_TOKEN_AUDIENCE", "", &DatabricksConfig::token_audience},
      {"account_id", "DATABRICKS_ACCOUNT_ID", "", &DatabricksConfig::account_id},
      {"oidc_token_env", "DATABRICKS_OIDC_TOKEN_ENV", "env-oidc", &DatabricksConfig::oidc_token_env},
      {"oidc_token_filepath", "DATABRICKS_OIDC_TOKEN_FILEPATH", "file-oidc",
       &DatabricksConfig::oidc_token_filepath, "DATABRICKS_OIDC_TOKEN_FILE"},
      {"azure_client_id", "ARM_CLIENT_ID", "azure", &DatabricksConfig::azure_client_id},
      {"azure_client_secret", "ARM_CLIENT_SECRET", "azure", &DatabricksConfig::azure_client_secret},
      {"azure_tenant_id", "ARM_TENANT_ID", "azure", &DatabricksConfig::azure_tenant_id},
      {"azure_workspace_resource_id", "DATABRICKS_AZURE_RESOURCE_ID", "azure",
       &DatabricksConfig::azure_workspace_resource_id},
      {"google_credentials", "GOOGLE_CREDENTIALS", "google", &DatabricksConfig::google_credentials},
      {"google_service_account", "DATABRICKS_GOOGLE_SERVICE_ACCOUNT", "google",
       &DatabricksConfig::google_service_account},
      {"metadata_service_url", "DATABRICKS_METADATA_SERVICE_URL", "metadata-service",
       &DatabricksConfig::metadata_service_url},
      {"databricks_cli_path", "DATABRICKS_CLI_PATH", "", &DatabricksConfig::databricks_cli_path},
      {"group_id", "DATABRICKS_GROUP_ID", "", &DatabricksConfig::group_id},
      // As databricks-sdk 0.162.0: only a profile has authorization details.
      {"authorization_details", nullptr, "", &DatabricksConfig::authorization_details},
      // As databricks-sdk 0.162.0: no variable holds the OAuth scopes.
      {"scopes", nullptr, "", &DatabricksConfig::scopes},
  };
  return settings;
}

std::string ConfigFilePath() {
  std::string path = GetEnv("DATABRICKS_CONFIG_FILE").value_or("");
  if (path.empty()) path = "~/.databrickscfg";
  if (path == "~" || path.rfind("~/", 0) == 0) {
    auto home = GetEnv("HOME");
    if (!home || home->empty()) return "";
    path = *home + path.substr(1);
  }
  return path;
}

// The SDK's _fix_host_if_needed: "https://" when no scheme, the path dropped.
Result<std::string> NormalizeHost(const std::string& raw, const std::string& origin) {
  std::string h = raw;
  if (h.find("://") == std::string::npos) h = "https://" + h;
  auto parsed = ParseUrl(h);
  if (!parsed.ok()) {
    return InvalidArgumentError("the Databricks host from " + origin +
                                " is not a URL: " + parsed.status().message());
  }
  return parsed->scheme + "://" + parsed->Authority();
}

// The SDK's _parse_scopes: each once, sorted, joined by spaces ("" when
// none).
std::string NormalizeScopes(const std::string& raw) {
  std::string out;
  for (const std::string& s : SplitDatabricksScopes(raw)) out += (out.empty() ? "" : " ") + s;
  return out;
}

// Loads the profile into `config` (only settings the environment left empty).
Status LoadProfile(DatabricksConfig& config, const std::string& requested) {
  const std::string path = ConfigFilePath();
  // As the SDK: a missing file is no error, even for a named profile (the
  // chain then finds no credentials and says so).
  if (path.empty() || !FileExists(path)) return Status::Ok();
  auto text = ReadFile(path, uint64_t{1} << 20);
  if (!text.ok()) return text.status().WithContext("reading the Databricks config file");
  SLUICE_ASSIGN_OR_RETURN(IniFile ini, ParseIni(*text, path));
  std::string profile = requested;
  bool fallback = false;
  if (profile.empty()) {
    if (auto s = ini.find("__settings__"); s != ini.end()) {
      if (auto d = s->second.find("default_profile"); d != s->second.end()) profile = d->second;
    }
  }
  if (profile == "__settings__") {
    return InvalidArgumentError("__settings__ is a reserved section name and cannot be used as a profile");
  }
  if (profile.empty()) {
    auto d = ini.find("DEFAULT");
    if (d == ini.end() || d->second.empty()) return Status::Ok();
    profile = "DEFAULT";
    fallback = true;
  }
  auto section = ini.find(profile);
  if (section == ini.end()) {
    if (fallback) return Status::Ok();
    return InvalidArgumentError("resolve: " + path + " has no " + profile + " profile configured");
  }
  const std::string origin = "profile " + profile + " of " + path;
  for (const Setting& s : Settings()) {
    auto it = section->second.find(s.name);
    if (it == section->second.end() || it->second.empty()) continue;
    if (!(config.*s.field).empty()) continue;  // the environment's wins
    config.*s.field = it->second;
    config.origin[s.name] = origin;
  }
  config.profile = profile;
  config.config_file = path;
  return Status::Ok();
}

}  // namespace

std::set<std::string> SplitDatabricksScopes(std::string_view raw) {
  std::set<std::string> scopes;
  size_t at = 0;
  while (at < raw.size()) {
    size_t end = raw.find_first_of(", ", at);
    if (end == std::string_view::npos) end = raw.size();
    if (end > at) scopes.emplace(raw.substr(at, end - at));
    at = end + 1;
  }
  return scopes;
}

const std::vector<std::string_view>& DatabricksAuthTypes() {
  static const std::vector<std::string_view> types = {
      "pat",          "basic",           "metadata-service", "oauth-m2m",          "env-oidc",
      "file-oidc",    "github-oidc",     "azure-client-secret", "github-oidc-azure", "azure-cli",
      "azure-devops-oidc", "external-browser", "databricks-cli", "runtime-oauth",   "runtime",
      "google-credentials", "google-id", "model-serving"};
  return types;
}

std::string DatabricksScopes(const DatabricksConfig& config) {
  return config.scopes.empty() ? std::string("all-apis") : config.scopes;
}

std::string DatabricksSettingOrigin(const DatabricksConfig& config, const std::string& name) {
  auto it = config.origin.find(name);
  return it == config.origin.end() ? std::string("?") : it->second;
}

Result<DatabricksConfig> LoadDatabricksConfig() {
  DatabricksConfig config;
  for (const Setting& s : Settings()) {
    const char* env = s.env;
    if (env == nullptr) continue;
    auto value = GetEnv(env);
    if (!value && s.alias != nullptr) value = GetEnv(env = s.alias);
    if (!value || value->empty()) continue;
    config.*s.field = *value;
    config.origin[s.name] = env;
  }
  const std::string requested = GetEnv("DATABRICKS_CONFIG_PROFILE").value_or("");
  bool any_auth = false;
  for (const Setting& s : Settings()) {
    if (*s.auth != '\0' && !(config.*s.field).empty()) any_auth = true;
  }
  if (!requested.empty() || (!any_auth && config.host.empty())) {
    SLUICE_RETURN_IF_ERROR(LoadProfile(config, requested));
  }
  if (!config.host.empty()) {
    SLUICE_ASSIGN_OR_RETURN(config.host, NormalizeHost(config.host, config.origin["host"]));
  }
  config.scopes = NormalizeScopes(config.scopes);
  const auto& types = DatabricksAuthTypes();
  if (!config.auth_type.empty() &&
      std::find(types.begin(), types.end(), config.auth_type) == types.end()) {
    std::string names;
    for (size_t i = 0; i < types.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == types.size() ? " and " : ", ") + std::string(types[i]);
    }
    return InvalidArgumentError("the Databricks auth type '" + config.auth_type + "' (from " +
                                config.origin["auth_type"] + ") is not supported; Sluice has " + names);
  }
  std::set<std::string> kinds;
  for (const Setting& s : Settings()) {
    if (*s.auth != '\0' && !(config.*s.field).empty()) kinds.insert(s.auth);
  }
  if (kinds.size() > 1 && config.auth_type.empty()) {
    std::string names;
    for (const std::string& k : kinds) names += (names.empty() ? "" : " and ") + k;
    return InvalidArgumentError("validate: more than one authorization method configured: " +
                                names + " (set DATABRICKS_AUTH_TYPE to choose one)");
  }
  return config;
}

}  // namespace sluice

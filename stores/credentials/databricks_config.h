// The Databricks workspace and credentials as the Databricks SDK's Config()
// resolves them (unified authentication), before any token is fetched:
//   1. the environment: DATABRICKS_HOST, DATABRICKS_TOKEN,
//      DATABRICKS_CLIENT_ID, DATABRICKS_CLIENT_SECRET, DATABRICKS_USERNAME,
//      DATABRICKS_PASSWORD, DATABRICKS_DISCOVERY_URL, DATABRICKS_AUTH_TYPE,
//      DATABRICKS_TOKEN_AUDIENCE, DATABRICKS_ACCOUNT_ID, DATABRICKS_OIDC_TOKEN_ENV,
//      DATABRICKS_OIDC_TOKEN_FILEPATH (or its older name
//      DATABRICKS_OIDC_TOKEN_FILE), ARM_CLIENT_ID, ARM_CLIENT_SECRET,
//      ARM_TENANT_ID, DATABRICKS_AZURE_RESOURCE_ID, GOOGLE_CREDENTIALS,
//      DATABRICKS_GOOGLE_SERVICE_ACCOUNT, DATABRICKS_METADATA_SERVICE_URL,
//      DATABRICKS_CLI_PATH, DATABRICKS_GROUP_ID;
//   2. a profile of the config file (DATABRICKS_CONFIG_FILE, else
//      ~/.databrickscfg): DATABRICKS_CONFIG_PROFILE, else the file's
//      [__settings__] default_profile, else [DEFAULT] when it has settings
//      (only a profile gives `scopes` and `authorization_details`).
//      The file is skipped when no profile is named and the environment
//      already gives a host or a credential; a profile's values never
//      replace the environment's.
// Then, as the SDK validates, credentials of two kinds (a token, client
// credentials, a user name and password) without DATABRICKS_AUTH_TYPE are an
// error (as the SDK's kinds: a token file with a client id is one, so
// DATABRICKS_AUTH_TYPE=file-oidc must choose it). Reads the environment and the file; thread-safe as long as nobody
// changes the environment meanwhile.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

struct DatabricksConfig {
  std::string host;           // scheme://authority, no path; "" when none is set
  std::string token;          // a personal access token (secret)
  std::string client_id;      // a service principal's OAuth client
  std::string client_secret;  // (secret)
  std::string username;
  std::string password;       // (secret)
  std::string discovery_url;  // OIDC discovery; "" for the host's own
  std::string auth_type;      // "pat", "oauth-m2m", ...; "" for the first that applies
  // OIDC federation: the audience of an ID token asked for (GitHub's; ""
  // = the token endpoint), the variable holding an ID token ("" =
  // DATABRICKS_OIDC_TOKEN), a file holding one.
  std::string token_audience;
  // The account of an account-level host (accounts.cloud.databricks.com,
  // accounts.azuredatabricks.net, ...; DATABRICKS_ACCOUNT_ID): fills the
  // {account_id} of the host metadata's OIDC endpoint, and is the ID
  // token's audience there (databricks_oidc.h).
  std::string account_id;
  std::string oidc_token_env;
  std::string oidc_token_filepath;
  // An Azure service principal (Microsoft Entra ID) of an Azure Databricks
  // workspace: ARM_CLIENT_ID, ARM_CLIENT_SECRET, ARM_TENANT_ID ("" = the
  // workspace's own, from {host}/aad/auth), DATABRICKS_AZURE_RESOURCE_ID.
  std::string azure_client_id;
  std::string azure_client_secret;  // (secret)
  std::string azure_tenant_id;
  std::string azure_workspace_resource_id;
  // A Google service account's key (GOOGLE_CREDENTIALS): the JSON itself,
  // or the path of a file holding it (secret either way).
  std::string google_credentials;
  // The service account google-id impersonates through Application Default
  // Credentials (DATABRICKS_GOOGLE_SERVICE_ACCOUNT; an email).
  std::string google_service_account;
  // A local service handing out the workspace's token (the VS Code
  // extension's; DATABRICKS_METADATA_SERVICE_URL). A secret: its path is
  // the service's key (databricks_metadata_service.h).
  std::string metadata_service_url;
  // The Databricks CLI the databricks-cli strategy runs (DATABRICKS_CLI_PATH;
  // "" = `databricks` on PATH; databricks_cli.h).
  std::string databricks_cli_path;
  // A group whose role OAuth tokens are asked for (DATABRICKS_GROUP_ID; the
  // token endpoint's assume_group), and the profile's
  // `authorization_details` (a JSON text sent as is); both sent by the
  // strategies that ask Databricks' token endpoint (oauth-m2m, the OIDC
  // ones, runtime-oauth). With a group, the others are passed over.
  std::string group_id;
  std::string authorization_details;
  // The OAuth scopes asked for, space-separated, sorted, each once (a
  // profile's `scopes`, commas or spaces between; no variable has them, as
  // in the SDK); "" when none are configured.
  std::string scopes;
  std::string profile;        // the profile read; "" when none
  std::string config_file;    // the file the profile came from
  // Where each setting came from ("DATABRICKS_TOKEN", "profile DEFAULT of
  // /home/u/.databrickscfg"), by setting name ("host", "token", ...).
  std::map<std::string, std::string> origin;
};

// The SDK's names of the credential strategies Sluice has, in the SDK's
// order (databricks_credential.h); DATABRICKS_AUTH_TYPE names one of them.
const std::vector<std::string_view>& DatabricksAuthTypes();

// Scopes split at commas and spaces (as the SDK's _parse_scopes), each once.
std::set<std::string> SplitDatabricksScopes(std::string_view raw);

// The scopes every OAuth token request asks for, as the SDK's
// get_scopes_as_string: config.scopes, else "all-apis".
std::string DatabricksScopes(const DatabricksConfig& config);

// Where `config`'s setting `name` came from, for messages: "DATABRICKS_TOKEN",
// "profile sp of /home/u/.databrickscfg"; "?" when it is not set.
std::string DatabricksSettingOrigin(const DatabricksConfig& config, const std::string& name);

// Errors: kInvalidArgument for a host that is not a URL, a named profile the
// file lacks ("resolve: <file> has no <profile> profile configured"), an
// unparsable file (file and line, never a value), or credentials of two
// kinds ("validate: more than one authorization method configured: oauth
// and pat").
Result<DatabricksConfig> LoadDatabricksConfig();

}  // namespace sluice

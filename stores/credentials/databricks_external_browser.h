// The Databricks SDK's external-browser strategy, applied only when
// DATABRICKS_AUTH_TYPE (or a profile's auth_type) chooses it, as the SDK
// does: the Python SDK keeps the token of a user's interactive login in its
// own cache, ~/.config/databricks-sdk-py/oauth/<sha256>.json, named by the
// SHA-256 of json.dumps({"client_id", "host", "profile", "scopes"[,
// "group_id"]}, sort_keys=True) (client "databricks-cli", or
// DATABRICKS_CLIENT_ID with its secret; the scopes sorted, then
// "offline_access" unless DATABRICKS_DISABLE_OAUTH_REFRESH_TOKEN). Its
// access token is the bearer until 40 s before its expiry; then its refresh
// token is exchanged at the host's token endpoint (databricks_oidc.h), and
// the newest refresh token kept for the next refresh. Where the SDK would
// open a browser (no cache, or a refresh refused), Sluice fails, naming the
// cache file and saying to run `databricks auth login` and choose
// databricks-cli. An Azure Entra ID client (ARM_CLIENT_ID) is refused.
// Tokens are secrets: never in errors or a Credential's source. Used as
// CredentialChain's sources are (one Fetch at a time).
#pragma once

#include <memory>
#include <string>

#include "stores/credentials/credential_source.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

// The cache file of `config`'s login, as above ($HOME's).
std::string DatabricksSdkTokenCachePath(const DatabricksConfig& config);

std::unique_ptr<CredentialSource> MakeDatabricksExternalBrowserSource(const DatabricksConfig& config);

}  // namespace sluice

// The Databricks SDK's runtime-oauth strategy (databricks-sdk 0.162.0):
// inside a Databricks runtime, with OAuth scopes configured (a profile's
// `scopes`; the strategy does not apply without them), the runtime's own
// token (databricks_runtime_token.h) is exchanged at the runtime's
// workspace, {host}/oidc/v1/token, for an OAuth token of those scopes
// (RFC 8693 token exchange, the runtime's token as a Databricks personal
// access token, no client authentication), and that token is the bearer.
// Each refresh asks the provider again, so a rotated runtime token is the
// one exchanged. Tried before the runtime strategy, which sends the
// runtime's token itself.
//
// Thread safety: as a CredentialSource (one Fetch at a time).
#pragma once

#include <memory>

#include "stores/credentials/credential_source.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

// The strategy as a source of `config`. kNotFound (the strategy does not
// apply) outside a runtime, without scopes, or without the runtime's token
// (FetchDatabricksRuntimeTokenFor's reasons); `chosen`
// (DATABRICKS_AUTH_TYPE=runtime-oauth) turns kNotFound into
// kPermissionDenied. A refused exchange is kPermissionDenied naming the
// endpoint and the OAuth error code, never a token.
std::unique_ptr<CredentialSource> MakeDatabricksRuntimeOauthSource(DatabricksConfig config, bool chosen);

}  // namespace sluice

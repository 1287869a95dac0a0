// The Databricks SDK's metadata-service strategy (databricks-sdk 0.162.0),
// third in its order, after pat and basic: a local service (the Databricks
// extension for VS Code runs one) hands out the workspace's token.
// DATABRICKS_METADATA_SERVICE_URL (a profile's metadata_service_url) names
// it; with a host, each fetch is a GET of that URL with
// X-Databricks-Metadata-Version: 1 and X-Databricks-Host: <host>, answered
// {"access_token", "token_type", "expires_on" (unix seconds)}; the token is
// the bearer until then, asked for again ahead of expiry by the shared
// refresher.
//
// The URL is a secret as the SDK treats it (its path is the service's key):
// errors and whoami name only its scheme and authority. Only "Bearer"
// tokens are taken (Sluice sends bearer tokens only; the SDK would send
// another type's name).
//
// Thread safety: as a CredentialSource (one Fetch at a time).
#pragma once

#include <memory>

#include "stores/credentials/credential_source.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

// The strategy as a source of `config`. kNotFound (the strategy does not
// apply) without the URL or a host; kPermissionDenied when the service
// fails or answers without a token, a token type or a readable expiry.
std::unique_ptr<CredentialSource> MakeDatabricksMetadataServiceSource(const DatabricksConfig& config);

}  // namespace sluice

// The Databricks SDK's google-credentials strategy for a workspace on
// Google Cloud: a service account's key (GOOGLE_CREDENTIALS, the JSON or a
// file's path) signs google-auth's ID token grant for the audience of the
// workspace's host (gcs_service_account.h); the ID token is the bearer, and
// an access token of the account (scopes cloud-platform and compute) goes
// beside it as X-Databricks-GCP-SA-Access-Token when Google gives one (the
// SDK goes on without it). Refreshed ahead of the ID token's expiry. Keys
// and tokens never appear in errors or a Credential's source.
#pragma once

#include <memory>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

std::unique_ptr<CredentialSource> MakeDatabricksGoogleCredentialsSource(const DatabricksConfig& config);

}  // namespace sluice

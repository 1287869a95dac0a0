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

// The SDK's google-id strategy: Application Default Credentials (gcs_adc.h;
// a credentials file's token asked for IAM's scope) impersonate the service
// account DATABRICKS_GOOGLE_SERVICE_ACCOUNT through IAM Credentials
// (SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT, else
// https://iamcredentials.googleapis.com): generateIdToken {"audience": host,
// "delegates": null, "includeEmail": true} gives the bearer, refreshed
// before its "exp"; generateAccessToken (scopes cloud-platform and compute)
// the X-Databricks-GCP-SA-Access-Token beside it when IAM gives one (the
// SDK goes on without it). Applies when the host and the account are set;
// then ADC failing is an error, not a source that does not apply.
std::unique_ptr<CredentialSource> MakeDatabricksGoogleIdSource(const DatabricksConfig& config);

}  // namespace sluice

// Databricks credentials as a chain, in databricks-sdk 0.162.0's order of
// credential strategies (by the SDK's names), over a DatabricksConfig
// (databricks_config.h):
//   1. pat: the personal access token ("token");
//   2. basic: a user name and password: not supported (an error saying so);
//   3. metadata-service: a local service's token (the VS Code extension's;
//      databricks_metadata_service.h);
//   4. oauth-m2m: a service principal's client credentials: the
//      client_credentials grant (client id and secret as Basic auth, the
//      configured scopes, else all-apis) at the token endpoint OIDC discovery names
//      (databricks_oidc.h);
//   5. env-oidc, 6. file-oidc, 7. github-oidc: an ID token of another
//      identity provider exchanged at that endpoint (databricks_oidc.h);
//   8. azure-client-secret, 9. github-oidc-azure, 10. azure-cli: Entra ID
//      tokens of an Azure workspace (databricks_azure.h);
//   11. azure-devops-oidc: an Azure DevOps pipeline's ID token exchanged
//      as 5-7 (databricks_oidc.h);
//   12. external-browser, only when chosen: the Python SDK's cached browser
//      login (databricks_external_browser.h);
//   13. databricks-cli: `databricks auth token`, the CLI's login
//      (databricks_cli.h);
//   14. runtime-oauth: with scopes configured, the runtime's token exchanged
//      for an OAuth token of them (databricks_runtime_oauth.h);
//   15. runtime: a Databricks runtime's own token, which a binding hands
//      the engine (databricks_runtime_token.h);
//   16. google-credentials: a Google service account's ID token for the
//      host; 17. google-id: one of an account impersonated through
//      Application Default Credentials (databricks_google.h);
//   18. model-serving: Model Serving's mounted token
//      (databricks_model_serving.h).
// Every token with an expiry is refreshed ahead of it by the shared
// refresher. DATABRICKS_AUTH_TYPE (or the profile's auth_type) keeps only
// the strategy of that name. With DATABRICKS_GROUP_ID, as the SDK, only
// the strategies that ask Databricks' token endpoint (oauth-m2m, env-oidc,
// file-oidc, github-oidc, azure-devops-oidc, external-browser,
// runtime-oauth) apply, asking for the group's token (assume_group);
// another one chosen is an error.
//
// Thread safety: as CredentialChain and SharedCredential.
#pragma once

#include <memory>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// The chain above for `config` ("Databricks credentials").
std::unique_ptr<CredentialChain> MakeDatabricksCredentialChain(const DatabricksConfig& config);

// The process-wide shared credential of `config` (one per host and
// credential), refreshed as GCS's tokens are (gcs_credential.h).
std::shared_ptr<SharedCredential> DatabricksSharedCredential(const DatabricksConfig& config);

}  // namespace sluice

// Databricks credentials as a chain, in the Databricks SDK's order of
// credential strategies (of those Sluice has), over a DatabricksConfig
// (databricks_config.h):
//   1. pat: the personal access token ("token");
//   2. oauth-m2m: a service principal's client credentials: the token
//      endpoint from OIDC discovery (discovery_url, else the host metadata's
//      oidc_endpoint, else {host}/oidc; + /.well-known/oauth-authorization-
//      server), then the
//      client_credentials grant there (client id and secret as Basic auth,
//      scope all-apis); the token is refreshed ahead of expiry by the shared
//      refresher.
// DATABRICKS_AUTH_TYPE (or the profile's auth_type) keeps only the strategy
// of that name. User name and password (basic), Azure, Google and OIDC
// federation strategies and a Databricks runtime's own token are not
// supported (a configuration of them is an error saying so).
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

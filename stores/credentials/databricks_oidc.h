// Databricks' own OAuth endpoint and the credential strategies that trade
// something for a token there, as the Databricks SDK does them:
//   - the token endpoint, from OIDC discovery (discovery_url, else the
//     host metadata's oidc_endpoint with its {account_id} filled from
//     DATABRICKS_ACCOUNT_ID or the metadata, else {host}/oidc; +
//     /.well-known/oauth-authorization-server); an account host's
//     {account_id} with no account id is an error;
//   - OIDC federation: an ID token of another identity provider exchanged
//     there (RFC 8693 token exchange, no secret; the client id of a
//     service principal's federation policy, or none for an account-wide
//     policy), from
//       env-oidc:    the variable DATABRICKS_OIDC_TOKEN_ENV names, else
//                    DATABRICKS_OIDC_TOKEN;
//       file-oidc:   the file DATABRICKS_OIDC_TOKEN_FILEPATH (re-read at
//                    every refresh: such files are rotated);
//       github-oidc: GitHub Actions' ID token endpoint
//                    (ACTIONS_ID_TOKEN_REQUEST_URL with
//                    ACTIONS_ID_TOKEN_REQUEST_TOKEN; a client id needed),
//                    for the audience DATABRICKS_TOKEN_AUDIENCE, else the
//                    host metadata's first
//                    token_federation_default_oidc_audiences, else on an
//                    account host (metadata without workspace_id) the
//                    account id, else the token endpoint;
//       azure-devops-oidc: an Azure DevOps pipeline's ID token, POSTed for
//                    at {SYSTEM_TEAMFOUNDATIONCOLLECTIONURI}{SYSTEM_TEAMPROJECTID}
//                    /_apis/distributedtask/hubs/{SYSTEM_HOSTTYPE}/plans/
//                    {SYSTEM_PLANID}/jobs/{SYSTEM_JOBID}/oidctoken with
//                    SYSTEM_ACCESSTOKEN (a client id needed).
// ID tokens and the tokens they buy are secrets: never in error text or a
// Credential's source. Sources are used as CredentialChain's.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/databricks_config.h"
#include "stores/credentials/gcs_access_token.h"

namespace sluice {

// The token endpoint of `config`'s host, discovered as above (blocking).
// kPermissionDenied naming the discovery URL when discovery fails or names
// no token endpoint.
Result<std::string> DatabricksTokenEndpoint(const DatabricksConfig& config);

// POSTs the form `fields` (with `headers`) to `endpoint` and reads the token
// it answers. Errors say "<what> to <endpoint> failed: <why>" (the
// endpoint's OAuth error code, never a secret), kPermissionDenied for a
// refusal.
Result<AccessToken> RequestDatabricksToken(const std::string& endpoint,
                                           const std::vector<std::pair<std::string, std::string>>& fields,
                                           const std::string& what,
                                           std::vector<std::pair<std::string, std::string>> headers = {});

// GitHub Actions' ID token for `audience` (a secret): kNotFound saying why
// when not in GitHub Actions or GitHub gives none (as the SDK, which then
// leaves the strategy out); never the request token in error text.
Result<std::string> GithubActionsIdToken(const std::string& audience);

std::unique_ptr<CredentialSource> MakeDatabricksEnvOidcSource(const DatabricksConfig& config);
std::unique_ptr<CredentialSource> MakeDatabricksFileOidcSource(const DatabricksConfig& config);
std::unique_ptr<CredentialSource> MakeDatabricksGithubOidcSource(const DatabricksConfig& config);
std::unique_ptr<CredentialSource> MakeDatabricksAzureDevopsOidcSource(const DatabricksConfig& config);

}  // namespace sluice

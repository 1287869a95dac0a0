// The Databricks SDK's Azure strategies for an Azure Databricks workspace
// (one on *.azuredatabricks.net, *.databricks.azure.us or
// *.databricks.azure.cn; SLUICE_DATABRICKS_ENTRA_ENDPOINT names a private
// cloud's Entra ID, or a test's fake, and makes any host one):
//   azure-client-secret: an Azure service principal's client secret
//     (ARM_CLIENT_ID, ARM_CLIENT_SECRET, ARM_TENANT_ID) exchanged with Entra
//     ID's v1 endpoint for the workspace's token and the cloud's
//     service-management one;
//   github-oidc-azure: GitHub Actions' ID token (audience
//     api://AzureADTokenExchange) as the client assertion of the service
//     principal ARM_CLIENT_ID's federated credential, exchanged with Entra
//     ID's v1 endpoint for the workspace's token only (tenant: ARM_TENANT_ID,
//     else where {host}/oidc/oauth2/v2.0/authorize redirects);
//   azure-cli: the tokens of the account `az login` signed in, as the SDK
//     asks the Azure CLI for them (`az account get-access-token --resource
//     <the Azure Databricks application> --output json`, with
//     --subscription of DATABRICKS_AZURE_RESOURCE_ID first when set and
//     --tenant when known and the CLI is not signed in as a managed
//     identity); for a service principal's login (a token without a "upn"
//     claim) the service-management token too when the CLI gives it. The
//     program is $SLUICE_AZURE_CLI, else az on PATH (FindLoginProgram). As
//     the SDK, a CLI that is missing or fails leaves the strategy out.
// Each sends the workspace's token as the bearer, the management one as
// X-Databricks-Azure-SP-Management-Token and DATABRICKS_AZURE_RESOURCE_ID as
// X-Databricks-Azure-Workspace-Resource-Id. Tokens and secrets never appear
// in errors or a Credential's source. Sources are used as CredentialChain's.
#pragma once

#include <memory>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/databricks_config.h"

namespace sluice {

std::unique_ptr<CredentialSource> MakeDatabricksAzureClientSecretSource(const DatabricksConfig& config);
std::unique_ptr<CredentialSource> MakeDatabricksGithubOidcAzureSource(const DatabricksConfig& config);
std::unique_ptr<CredentialSource> MakeDatabricksAzureCliSource(const DatabricksConfig& config);

}  // namespace sluice

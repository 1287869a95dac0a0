// Azure Blob credentials as a chain on the shared mechanism, in the order a
// store uses them:
//   1. account key        the connection string's AccountKey, or
//                         AZURE_ACCOUNT_ACCESS_KEY: signs with SharedKey;
//   2. SAS token          AZURE_STORAGE_SAS_TOKEN (read again at every
//                         refresh, so a rotated token is seen) or the
//                         connection string's SharedAccessSignature:
//                         appended to every URL; it expires at its `se`;
//   then DefaultAzureCredential's bearer-token sources (azure_identity_sources.h):
//   3. environment        AZURE_TENANT_ID + AZURE_CLIENT_ID + AZURE_CLIENT_SECRET
//                         or AZURE_CLIENT_CERTIFICATE_PATH;
//   4. workload identity  AZURE_FEDERATED_TOKEN_FILE (AKS);
//   5. managed identity   IDENTITY_ENDPOINT/IDENTITY_HEADER, MSI_ENDPOINT/MSI_SECRET, IMDS;
//   6. Azure CLI          `az account get-access-token` of the `az login` account;
//   7. Azure PowerShell   Get-AzAccessToken of the `Connect-AzAccount` account (pwsh);
//   8. Azure Developer CLI `azd auth token` of the `azd auth login` account.
// When none applies the store reads anonymously (public containers).
//
// Thread safety: every function is thread-safe.
#pragma once

#include <memory>

#include "stores/credentials/azure_identity_sources.h"
#include "stores/credentials/azure_settings.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// A new chain over `settings` (copied into the sources). Credential fields:
// `account_key`, `sas_token` or `bearer`.
std::unique_ptr<CredentialChain> MakeAzureCredentialChain(const AzureSettings& settings,
                                                          const AzureEndpointOptions& endpoints = {});

// The process-wide shared credential for `settings` and the current
// environment (every AZURE_*, IDENTITY_*, MSI_*, IMDS_* and SLUICE_AZURE_*
// variable, and PATH, which finds the CLI): every store
// with the same ones gets the same object. Bearer tokens are refreshed
// ahead of expiry and never handed out with less than a minute left.
// Nothing is fetched here.
std::shared_ptr<SharedCredential> AzureSharedCredential(const AzureSettings& settings,
                                                        const AzureEndpointOptions& endpoints = {});

}  // namespace sluice

// Azure Blob credentials as a chain on the shared mechanism, in the order a
// store uses them:
//   1. account key  (the connection string's AccountKey, or AZURE_ACCOUNT_ACCESS_KEY):
//                   signs every request with SharedKey;
//   2. SAS token    (AZURE_STORAGE_SAS_TOKEN, or the connection string's
//                   SharedAccessSignature): appended to every URL.
// Both are static (no expiry, so no refresher thread); token sources (Azure
// AD, workload identity) join the chain after them with a `bearer`.
//
// Thread safety: every function is thread-safe.
#pragma once

#include <memory>

#include "stores/credentials/azure_settings.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/shared_credential.h"

namespace sluice {

// A new chain over `settings` (copied into the sources). Credential fields:
// `account_key` or `sas_token`.
std::unique_ptr<CredentialChain> MakeAzureCredentialChain(const AzureSettings& settings);

// The process-wide shared credential for `settings`: every store with the
// same settings gets the same object. Nothing is fetched here.
std::shared_ptr<SharedCredential> AzureSharedCredential(const AzureSettings& settings);

}  // namespace sluice

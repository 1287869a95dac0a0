// Azure Blob storage: azure://container/path and azure-dl://container/path
// (Mosaic's forms; azure-dl:// — Data Lake Gen2 accounts — is served through
// the same Blob endpoint, which such accounts also expose).
//
// Environment:
//   AZURE_STORAGE_CONNECTION_STRING: account, key or SharedAccessSignature,
//     BlobEndpoint (custom endpoints, Azurite), as Azure's tools read it;
//   else AZURE_ACCOUNT_NAME with AZURE_ACCOUNT_ACCESS_KEY (Mosaic's names)
//     and/or AZURE_STORAGE_SAS_TOKEN (with or without its leading '?');
//   AZURE_BLOB_ENDPOINT: overrides the endpoint (default
//     https://<account>.blob.core.windows.net), e.g.
//     http://127.0.0.1:10000/devstoreaccount1 for Azurite in path style.
// (read by stores/credentials/azure_settings.h). The credential is the first
// of the chain in stores/credentials/azure_credential.h (one shared
// credential per process for the same settings): an account key signs
// every request with SharedKey; a SAS token is appended to every URL; a
// bearer token from DefaultAzureCredential's sources (service principal,
// workload identity, managed identity) goes in `Authorization: Bearer`.
// When no source applies, requests go anonymous (public containers).
// Thread safety: as every Store (store.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// For `sluice whoami`: the account, endpoint, the credential's source and
// kind (no secret), its expiry and every source tried; or why requests go
// anonymous. Fetches the credential (may block). Errors: as OpenAzureStore.
Result<std::string> DescribeAzureAuth(std::string_view url);

Result<std::unique_ptr<Store>> OpenAzureStore(std::string_view url,
                                              boost::asio::any_io_executor executor,
                                              const StoreOptions& options);

}  // namespace sluice

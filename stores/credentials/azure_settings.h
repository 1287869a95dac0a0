// Where an Azure Blob store is and what it may sign with, read from the
// environment as Mosaic and Azure's tools read it:
//   AZURE_STORAGE_CONNECTION_STRING: account, key or SharedAccessSignature,
//     BlobEndpoint (stores/signing/azure_connection_string.h);
//   else AZURE_ACCOUNT_NAME with AZURE_ACCOUNT_ACCESS_KEY;
//   AZURE_STORAGE_SAS_TOKEN: a SAS token (with or without its leading '?'),
//     over the connection string's;
//   AZURE_BLOB_ENDPOINT: the endpoint, over both (default
//     https://<account>.blob.core.windows.net).
// Reads the environment: thread-safe as long as nobody changes it meanwhile.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct AzureSettings {
  std::string account;      // may be empty with a connection string holding only a SAS
  std::string endpoint;     // the Blob service URL, no trailing '/'
  std::string account_key;  // base64; a secret; empty: none
  std::string key_from;     // the variable it came from (no secret)
  std::string sas_token;    // without '?'; a secret; empty: none
  std::string sas_from;     // the variable it came from (no secret)
};

// The settings for the store at `url` (named, redacted, in errors).
// Errors: the connection string's (kInvalidArgument, in the context of
// AZURE_STORAGE_CONNECTION_STRING, no secret); kPermissionDenied naming the
// variables when neither a connection string nor AZURE_ACCOUNT_NAME is set.
Result<AzureSettings> ReadAzureSettings(std::string_view url);

}  // namespace sluice

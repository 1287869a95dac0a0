// Parser for Azure Storage connection strings
// ("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=...;EndpointSuffix=core.windows.net").
// Pure function; thread-safe. The account key and SAS token never appear in
// an error message.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// The well-known development-storage (Azurite) account and key, public by
// design and documented by Microsoft.
inline constexpr std::string_view kAzuriteAccountName = "devstoreaccount1";
inline constexpr std::string_view kAzuriteAccountKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

struct AzureConnectionString {
  std::string account_name;
  std::string account_key;      // base64 (validated); a secret
  std::string sas_token;        // without a leading '?'; a secret
  std::string protocol;         // "http" or "https" (default "https")
  std::string endpoint_suffix;  // default "core.windows.net"
  // The Blob service URL without a trailing '/': BlobEndpoint when given,
  // else "<protocol>://<account>.blob.<suffix>", or Azurite's
  // "http://127.0.0.1:10000/devstoreaccount1" for UseDevelopmentStorage=true.
  std::string blob_endpoint;
  bool development_storage = false;
};

// Parses `text`: ';'-separated "Key=Value" settings (the value runs to the
// end of the setting and may hold '='); key names are matched without regard
// to case; empty settings (";;", a trailing ';') are skipped; settings for
// other services (QueueEndpoint, ...) are ignored. Errors (InvalidArgument)
// name the setting by key or position, never by a secret value: a setting
// without '=', a repeated key, an unknown protocol, an AccountKey that is not
// base64, and no way to reach the Blob service (neither BlobEndpoint,
// AccountName nor UseDevelopmentStorage=true).
Result<AzureConnectionString> ParseAzureConnectionString(std::string_view text);

}  // namespace sluice

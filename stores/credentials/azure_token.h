// What Azure's bearer-token sources share: the scope they ask for, the
// Entra ID (Azure AD) authority, its token endpoint, and reading a token
// answer, whichever endpoint gave it (Entra ID, IMDS, App Service, Azure ML).
//
// Tokens, secrets and assertions never appear in error text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "stores/credentials/credential.h"

namespace sluice {

// The scope of Azure Storage tokens, and the resource managed identity
// endpoints take for it (the scope without "/.default").
inline constexpr std::string_view kAzureStorageScope = "https://storage.azure.com/.default";
inline constexpr std::string_view kAzureStorageResource = "https://storage.azure.com";

// AZURE_AUTHORITY_HOST (a bare host gets "https://"), else
// https://login.microsoftonline.com; no trailing '/'.
std::string AzureAuthorityHost();

// "<authority>/<tenant>/oauth2/v2.0/token". kInvalidArgument when `tenant`
// holds anything but letters, digits, '-' and '.' (it becomes a path).
Result<std::string> EntraTokenEndpoint(std::string_view authority, std::string_view tenant);

// An access token from `body`: "access_token", with an expiry from
// "expires_in" (seconds from `now`) or "expires_on" (unix seconds), each a
// JSON number or a string of digits (IMDS and App Service send strings);
// an hour when neither is there. kPermissionDenied naming `where` (no
// secret) when the body is not JSON or has no access_token.
Result<Credential> ParseAzureTokenResponse(std::string_view body, int64_t now,
                                           std::string_view where);

// An access token from what `az account get-access-token --output json`
// printed: "accessToken", expiring at "expires_on" (unix seconds, Azure CLI
// 2.54 and later) or else "expiresOn" (the local time as "YYYY-MM-DD
// HH:MM:SS.ffffff", older CLIs). kPermissionDenied naming `where` when it
// is not JSON or lacks either (never quoting it: it holds the token).
Result<Credential> ParseAzureCliToken(std::string_view output, int64_t now,
                                      std::string_view where);

// An access token from what `azd auth token --output json` printed:
// "token", expiring at "expiresOn" ("YYYY-MM-DDTHH:MM:SSZ", UTC). Errors as
// ParseAzureCliToken's.
Result<Credential> ParseAzureDeveloperCliToken(std::string_view output, int64_t now,
                                               std::string_view where);

// An access token from what the Azure PowerShell script printed: its first
// whitespace-separated word starting "azsdk%", "azsdk%<token>%<expiry>",
// the expiry in unix seconds (UTC by definition). kNotFound when there is
// no such word (azure-identity: unavailable inside DefaultAzureCredential);
// kPermissionDenied naming `where` when it is malformed. Never quotes it.
Result<Credential> ParseAzurePowerShellToken(std::string_view output, int64_t now,
                                             std::string_view where);

// The error an Entra ID or managed identity endpoint gave, for error text:
// its "error" and the first line of "error_description" (AADSTS codes);
// "" when the body has neither.
std::string AzureTokenErrorDetail(std::string_view body);

// POSTs `form` (url-encoded here) to Entra ID's token endpoint `endpoint`
// and reads the answer as above. A failed exchange keeps the endpoint's
// code (kNotFound becomes kPermissionDenied: a missing endpoint is not a
// source that does not apply) and says "<what>: token request to
// <endpoint> failed: <detail>".
Result<Credential> RequestEntraToken(const std::string& endpoint,
                                     const std::vector<std::pair<std::string, std::string>>& form,
                                     int64_t now, std::string_view what);

}  // namespace sluice

// What the GCS bearer-token sources share: parsing an OAuth2 token response
// ({"access_token": ..., "expires_in": ...}) into a Credential. Caching and
// refreshing the token is SharedCredential's (gcs_credential.h).
//
// Access tokens are secrets: they never appear in error text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/credential.h"

namespace sluice {

struct AccessToken {
  std::string token;        // a secret
  int64_t expires_in = 3600;  // seconds; 3600 when the response omits it
};

// Parses a token endpoint's JSON answer. kPermissionDenied naming `source`
// (a URL or account, no secret) when it is not JSON or has no access_token.
Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source);

// A bearer credential from `source` (no secret) holding `token`, fetched at
// `now` (unix seconds).
Credential BearerCredential(std::string source, AccessToken token, int64_t now);

}  // namespace sluice

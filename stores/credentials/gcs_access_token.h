// What the GCS bearer-token sources share: parsing an OAuth2 token response
// ({"access_token": ..., "expires_in": ...}) into a Credential, the options
// for talking to Google's token endpoints, and form bodies. Caching and
// refreshing the token is SharedCredential's (gcs_credential.h).
//
// Access tokens are secrets: they never appear in error text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "stores/credentials/credential.h"
#include "stores/http/http_client.h"

namespace sluice {

struct AccessToken {
  std::string token;        // a secret
  int64_t expires_in = 3600;  // seconds; 3600 when the response omits it
};

// Parses a token endpoint's JSON answer. kPermissionDenied naming `source`
// (a URL or account, no secret) when it is not JSON or has no access_token.
// expires_in may be a number or a decimal string (some STS answer so).
Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source);

// A bearer credential from `source` (no secret) holding `token`, fetched at
// `now` (unix seconds).
Credential BearerCredential(std::string source, AccessToken token, int64_t now);

// Options for Google's OAuth2, STS and IAM endpoints: CredentialEndpointOptions
// with Google's 10 s, quoting an error answer's OAuth2 "error" code (e.g.
// invalid_grant) or its google.rpc "status" (e.g. PERMISSION_DENIED) when it
// is a plain word; descriptions are never quoted (they may echo input).
HttpClientOptions GoogleEndpointOptions();

// "a=1&b=2" with names and values percent-encoded; empty values are left
// out (as google-auth leaves them out).
std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields);

// POSTs `body` (form-encoded unless `content_type` says otherwise) to `url`
// and returns the answer. Errors keep the endpoint's code, except that
// kNotFound and kIoError (a 400 or other refusal) become kPermissionDenied
// (a missing endpoint is not a source that does not apply); their text is
// "<what> failed: <why>".
Result<HttpResponse> PostToGoogle(std::string url, std::string body, std::string_view what,
                                  std::vector<std::pair<std::string, std::string>> headers = {},
                                  std::string content_type = "application/x-www-form-urlencoded");

}  // namespace sluice

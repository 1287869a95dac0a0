// The token flows of google-auth's credential file types other than
// service_account (gcs_service_account.h), each one blocking fetch of an
// OAuth2 access token (SendBlocking; run by a CredentialSource, never on a
// store's executor):
//   authorized_user: the refresh-token grant at token_uri (what
//     `gcloud auth application-default login` writes);
//   impersonation: IAM Credentials' generateAccessToken for a target service
//     account, authorized by a source credential's bearer token;
//   external_account: workload identity federation (gcs_external_account.h).
// Every input below is parsed from a credentials file named `path` in
// errors; refresh tokens, client secrets and tokens are secrets and never
// appear in error text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "formats/json/py_json.h"
#include "stores/credentials/credential.h"

namespace sluice {

// IAM's scope, which google-auth gives a service account that is the
// source of an impersonation.
inline constexpr std::string_view kGoogleIamScope = "https://www.googleapis.com/auth/iam";

// POST token_uri (default https://oauth2.googleapis.com/token) with
// grant_type=refresh_token, client_id, client_secret, refresh_token (and
// `scope` when not empty; google-auth sends none for ADC user credentials).
// kInvalidArgument naming `path` when a field is missing.
Result<Credential> FetchAuthorizedUserToken(const JsonValue& info, const std::string& path,
                                            std::string_view scope, int64_t now);

struct ImpersonationRequest {
  std::string url;  // .../serviceAccounts/EMAIL:generateAccessToken
  std::vector<std::string> delegates;
  std::vector<std::string> scopes;
  int64_t lifetime_s = 3600;
};

// The target's email in `url` (between the last '/' and
// ":generateAccessToken"), or kInvalidArgument.
Result<std::string> ImpersonationTarget(const std::string& url);

// POST `request.url` with {"delegates", "scope", "lifetime": "<n>s"} and
// "Authorization: Bearer <source_bearer>"; the answer's accessToken and
// expireTime. The credential's source is "<source_name> impersonating EMAIL".
Result<Credential> GenerateAccessToken(const ImpersonationRequest& request,
                                       const std::string& source_bearer,
                                       const std::string& source_name);

// A credentials file of type impersonated_service_account: its
// source_credentials (authorized_user, or service_account with the IAM
// scope) then generateAccessToken at service_account_impersonation_url for
// `scope`, with its delegates.
Result<Credential> FetchImpersonatedServiceAccountToken(const JsonValue& info,
                                                        const std::string& path,
                                                        std::string_view scope, int64_t now);

}  // namespace sluice

// Workload identity federation: google-auth's external_account credentials
// file. A subject token from the credential_source
//   "file": a file's text, or with "format": {"type": "json",
//     "subject_token_field_name": F} its JSON member F;
//   "url": a GET of the URL with "headers", text or JSON the same way;
//   "executable": {"command", "timeout_millis" (5000..120000, default 30000),
//     "output_file"}: run only when GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1,
//     the command split at whitespace (as google-auth does), with
//     GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE, _TOKEN_TYPE, _INTERACTIVE=0,
//     _IMPERSONATED_EMAIL and _OUTPUT_FILE in its environment; it prints
//     {"version": 1, "success": true, "token_type", "id_token" or
//     "saml_response", "expiration_time"?}; an unexpired answer cached in
//     output_file is used without running it;
// is exchanged at token_url (default https://sts.googleapis.com/v1/token)
// for a Google access token (RFC 8693: grant_type token-exchange, audience,
// scope, requested_token_type access_token, subject_token,
// subject_token_type; client_id/client_secret as HTTP Basic when set;
// workforce_pool_user_project as options.userProject without a client id).
// With service_account_impersonation_url that token (scoped to IAM) buys a
// service account's token through generateAccessToken
// (service_account_impersonation.token_lifetime_seconds, default 3600).
// AWS-sourced ("environment_id": "aws1") and certificate sources are not
// read (kUnimplemented).
//
// Subject tokens, client secrets and access tokens are secrets: never in
// error text.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "formats/json/py_json.h"
#include "stores/credentials/credential.h"

namespace sluice {

// The whole flow for the file `info` read from `path`, for `scope`.
Result<Credential> FetchExternalAccountToken(const JsonValue& info, const std::string& path,
                                             std::string_view scope, int64_t now);

}  // namespace sluice

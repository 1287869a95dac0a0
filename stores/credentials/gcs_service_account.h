// OAuth2 bearer tokens for GCS from a service-account key file
// (GOOGLE_APPLICATION_CREDENTIALS): a JWT signed RS256 with the key's
// private key (OpenSSL), exchanged at the key's token_uri for an access
// token: a CredentialSource (shared and refreshed by gcs_credential.h).
//
// The private key, the JWT and the access token are secrets: they never
// appear in error text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "stores/credentials/credential.h"
#include "stores/credentials/credential_source.h"

namespace sluice {

struct ServiceAccountKey {
  std::string client_email;
  std::string private_key_id;
  std::string private_key_pem;  // a secret
  std::string token_uri;        // default https://oauth2.googleapis.com/token
  std::string path;             // the file it was read from, for error text
};

// Parses a key file's JSON. `path` names the file in errors (kInvalidArgument:
// not JSON, not "type": "service_account", a field missing) and is kept in
// the key for the errors of its token exchanges.
Result<ServiceAccountKey> ParseServiceAccountKey(std::string_view json, std::string_view path);

// Google's OAuth2 token endpoint: a key's default token_uri, and always the
// audience of its JWT (as google-auth signs it).
inline constexpr std::string_view kGoogleOAuth2TokenUri = "https://oauth2.googleapis.com/token";

// The signed JWT assertion "header.claims.signature" (base64url) for
// `scope`, issued at `now` (unix seconds), valid one hour. Pure function.
Result<std::string> MakeServiceAccountJwt(const ServiceAccountKey& key, std::string_view scope,
                                          int64_t now);

// google-auth's IDTokenCredentials: the JWT grant above with
// "target_audience" in place of a scope, exchanged at the key's token_uri
// for an ID token for that audience ("id_token"), expiring at its own "exp"
// claim. Errors as the source's below.
Result<Credential> FetchServiceAccountIdToken(const ServiceAccountKey& key, std::string_view target_audience,
                                              int64_t now);

// The read-write storage scope.
inline constexpr std::string_view kGcsScope =
    "https://www.googleapis.com/auth/devstorage.read_write";

// The source "service-account key file": each Fetch signs a JWT for `scope` with `key`
// and exchanges it at the key's token_uri (blocking, SendBlocking) for a
// bearer credential. Errors keep the token endpoint's code (kNotFound
// becomes kPermissionDenied: a missing endpoint is not a source that does
// not apply) and name the key file (the source's name) and the service
// account, never a secret.
std::unique_ptr<CredentialSource> MakeGcsServiceAccountSource(ServiceAccountKey key,
                                                              std::string_view scope = kGcsScope);

}  // namespace sluice

// A credential as any store signs or authorizes requests with it: an
// access-key pair (AWS SigV4, GCS HMAC, OCI customer secret keys), a bearer
// token (GCS OAuth2, Azure AD; with a session key, an OCI security token), or
// an Azure account key or SAS token, with
// its expiry and the name of the
// source that produced it (for error text and `sluice whoami`).
//
// Every field but `source` and `expires_at` is a secret: never logged, never
// put in error text. A plain value: copyable, not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stores/signing/sigv4.h"

namespace sluice {

struct Credential {
  // Who handed it out, e.g. "environment (AWS_ACCESS_KEY_ID)" or
  // "EC2 instance metadata (role 'trainer')". No secret.
  std::string source;
  SigV4Credentials keys;  // access key id, secret, session token
  std::string bearer;     // an OAuth2 access token; empty when unused
  std::string account_key;  // Azure: the account's shared key (base64); empty when unused
  std::string sas_token;    // Azure: a SAS token (query string, no '?'); empty when unused
  // OCI instance principals: the session private key (PEM) that signs
  // requests whose key id is "ST$" + `bearer`; empty when unused.
  std::string session_key_pem;
  // Headers every request carries beside the bearer token (name lower case,
  // value a secret), e.g. an Azure Databricks service principal's
  // x-databricks-azure-sp-management-token.
  std::vector<std::pair<std::string, std::string>> headers;
  // Unix seconds after which the credential is refused; nullopt: never
  // (static keys).
  std::optional<int64_t> expires_at;
};

}  // namespace sluice

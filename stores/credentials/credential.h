// A credential as any store signs or authorizes requests with it: an
// access-key pair (AWS SigV4, GCS HMAC, OCI customer secret keys) and/or a
// bearer token (GCS OAuth2, Azure AD), with its expiry and the name of the
// source that produced it (for error text and `sluice whoami`).
//
// Every field but `source` and `expires_at` is a secret: never logged, never
// put in error text. A plain value: copyable, not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "stores/signing/sigv4.h"

namespace sluice {

struct Credential {
  // Who handed it out, e.g. "environment (AWS_ACCESS_KEY_ID)" or
  // "EC2 instance metadata (role 'trainer')". No secret.
  std::string source;
  SigV4Credentials keys;  // access key id, secret, session token
  std::string bearer;     // an OAuth2 access token; empty when unused
  // Unix seconds after which the credential is refused; nullopt: never
  // (static keys).
  std::optional<int64_t> expires_at;
};

}  // namespace sluice

// A client assertion for an Entra ID certificate principal
// (AZURE_CLIENT_CERTIFICATE_PATH): a JWT signed RS256 with the
// certificate's private key, naming the certificate by its SHA-1
// thumbprint (x5t), as MSAL makes it.
//
// The private key and the assertion are secrets: never in error text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct ClientCertificate {
  std::string private_key_pem;  // a secret
  std::string x5t;              // base64url SHA-1 of the certificate's DER
};

// Reads a PEM file holding a certificate and its unencrypted private key
// (either order). kInvalidArgument naming `path` when either is missing,
// the key is encrypted or not RSA; kNotFound/kIoError when unreadable.
Result<ClientCertificate> ReadClientCertificate(const std::string& path);

// The assertion for `client_id` at token endpoint `audience`: header
// {"alg":"RS256","typ":"JWT","x5t"}, claims aud, iss = sub = client_id, a
// random jti, iat = now, exp = now + 600 (MSAL's claims: the SDK oracle
// compares them). `path` names the file in
// errors.
Result<std::string> MakeClientAssertion(const ClientCertificate& cert, std::string_view client_id,
                                        std::string_view audience, int64_t now,
                                        std::string_view path);

}  // namespace sluice

// JSON Web Tokens signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7515)
// through OpenSSL, for client assertions (Azure certificate principals) and
// service-account grants; and the RSA-SHA256 signature under them (OCI's
// request signatures use it too). Pure functions; thread-safe.
//
// Private keys and the tokens made with them are secrets: error text never
// holds either.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// The RSASSA-PKCS1-v1_5 SHA-256 signature of `data` (raw bytes) with the RSA
// private key in `private_key_pem` (PKCS#1 or PKCS#8 PEM, other PEM blocks
// may surround it), encrypted with `passphrase` when it is not empty. Errors
// (kInvalidArgument) name `what` (a file name, no secret): no key, a wrong
// or missing passphrase, not RSA. Deterministic: the same input gives the
// same signature (OCI's request signatures rely on it in tests).
Result<std::string> RsaSha256Sign(std::string_view data, std::string_view private_key_pem,
                                  std::string_view what, std::string_view passphrase = {});

// Base64url without padding (RFC 7515 section 2).
std::string Base64UrlEncode(std::string_view bytes);

// The claims of the JWT `token`: its middle part, base64url-decoded (the
// JSON text, not checked), unverified; nullopt when `token` is not
// "header.claims.signature" or the part does not decode. For deciding what
// to ask for next (whose token it is), never for trusting it.
std::optional<std::string> JwtClaimsText(std::string_view token);

// "b64url(header).b64url(claims).b64url(signature)" for the JSON texts
// `header_json` and `claims_json` (taken as given), signed with the RSA
// private key in `private_key_pem` (PKCS#1 or PKCS#8 PEM; other PEM blocks
// such as certificates may surround it). kInvalidArgument naming `what` (a
// file name, no secret) when the key is missing, encrypted or not RSA.
Result<std::string> SignJwtRs256(std::string_view header_json, std::string_view claims_json,
                                 std::string_view private_key_pem, std::string_view what);

}  // namespace sluice

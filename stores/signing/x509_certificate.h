// What the clients of certificate-based identities need of an X.509
// certificate and a fresh key pair, through OpenSSL: the certificate's SHA-1
// digest (Entra ID's x5t, OCI's fed-x509 fingerprint) and its subject's
// attribute values (OCI's "opc-tenant:<tenancy>"); an RSA key pair for an
// OCI session token (a new one, or one's own). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice {

struct X509Summary {
  std::string der_sha1;                 // 20 raw bytes: SHA-1 of the DER encoding
  std::vector<std::string> subject_values;  // each subject attribute's value (UTF-8), in order
};

// The first PEM certificate in `pem` (other PEM blocks may surround it).
// kInvalidArgument naming `what` (no secret) when there is none.
Result<X509Summary> ReadX509Certificate(std::string_view pem, std::string_view what);

// "AB:CD:...": upper-case hex bytes joined by ':' (OCI's fingerprints).
std::string ColonHex(std::string_view bytes);

struct RsaKeyPair {
  std::string private_pem;  // PKCS#8, unencrypted; a secret
  std::string public_pem;   // SubjectPublicKeyInfo ("BEGIN PUBLIC KEY")
};

// A new RSA key pair of `bits` bits. kInternal when OpenSSL fails.
Result<RsaKeyPair> GenerateRsaKeyPair(int bits);

// The RSA key in `private_key_pem` (PKCS#1 or PKCS#8, encrypted with
// `passphrase` when it is not empty) as an unencrypted pair: an OCI resource
// principal's own key is the session key of the token it buys.
// kInvalidArgument naming `what` (no secret) when no RSA key opens.
Result<RsaKeyPair> OpenRsaKeyPair(std::string_view private_key_pem, std::string_view what,
                                  std::string_view passphrase);

}  // namespace sluice

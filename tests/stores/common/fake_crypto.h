// The small pieces of crypto the fake identity services check requests
// with, written against OpenSSL directly (not the product's signing code
// they test). Test-only; thread-safe.
#pragma once

#include <openssl/evp.h>

#include <string>

namespace sluice::testing {

std::string FakeBase64(const std::string& bytes);
// Base64url without padding, as JWTs carry their parts.
std::string FakeBase64Url(const std::string& bytes);
// The raw digest of `data` by `md` (EVP_sha256(), ...).
std::string FakeDigest(const std::string& data, const EVP_MD* md);
// The text between `open` and the next '"' after it in `s`, "" when absent
// (a field of a JSON body or of an OCI Authorization header).
std::string QuotedAfter(const std::string& s, const std::string& open);
// Whether base64 `sig_b64` is an RSA-SHA256 signature of `data` by `key`.
bool VerifiesRsaSha256(EVP_PKEY* key, const std::string& sig_b64, const std::string& data);
// The same by the PEM public key `public_pem`.
bool VerifiesRsaSha256Pem(const std::string& public_pem, const std::string& sig_b64,
                          const std::string& data);
// The PEM public key of a PEM private key, "" when it does not read.
std::string PublicPemOf(const std::string& private_pem);

}  // namespace sluice::testing

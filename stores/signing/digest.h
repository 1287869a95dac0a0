// SHA-256, HMAC-SHA256 and base64 through OpenSSL: the primitives every
// request signer here is built from. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// Raw 32-byte SHA-256 digest of `data`.
std::string Sha256(std::string_view data);

// Lower-case hex SHA-256 of `data` (64 characters), as SigV4 writes payload
// hashes: Sha256Hex("") == "e3b0c442...b855".
std::string Sha256Hex(std::string_view data);

// Lower-case hex SHA-1 of `data` (40 characters). Not for signing: for names
// other tools derive with it (the AWS CLI's SSO token cache file).
std::string Sha1Hex(std::string_view data);

// Raw 32-byte HMAC-SHA256 of `data` under `key` (any length, may be empty).
std::string HmacSha256(std::string_view key, std::string_view data);

// Standard base64 (RFC 4648 section 4, with '=' padding, no line breaks).
std::string Base64Encode(std::string_view bytes);

// Inverse of Base64Encode. Requires canonical padded input (length a multiple
// of 4, '=' only at the end, at most two); no whitespace. False otherwise,
// and `out` is then unspecified.
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace sluice

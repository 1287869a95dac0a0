// AWS Signature Version 4 (and its Google Cloud Storage twin, GOOG4-HMAC-SHA256
// with HMAC keys): header signing and query (presigned URL) signing.
// Pure functions of their arguments: no clock, no I/O; thread-safe.
//
// Secrets (the secret key, the session token, derived keys) never appear in
// an error message. The returned signature and, for presigning, the session
// token in `query_to_add` are secrets of the request: do not log them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "stores/signing/canonical_request.h"
#include "stores/signing/signing_request.h"

namespace sluice {

struct SigV4Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: none
};

// The names that differ between AWS and GCS; everything else is shared.
struct SigV4Scheme {
  std::string algorithm = "AWS4-HMAC-SHA256";
  std::string key_prefix = "AWS4";             // prepended to the secret key
  std::string scope_terminator = "aws4_request";
  // Prefix of the headers and query parameters the signer adds, in the case
  // the wire uses: "X-Amz-Date", "X-Amz-Algorithm", ... The content hash
  // header is written in lower case ("x-amz-content-sha256").
  std::string param_prefix = "X-Amz-";
};

SigV4Scheme AwsSigV4Scheme();
SigV4Scheme GcsHmacScheme();  // GOOG4-HMAC-SHA256, GOOG4, goog4_request, X-Goog-

struct SigV4Config {
  SigV4Scheme scheme;
  std::string region;   // e.g. "us-east-1"; GCS uses "auto"
  std::string service;  // e.g. "s3", "storage"
  CanonicalUriRules uri_rules;
  // Header signing only: add and sign "<prefix>content-sha256: <payload_hash>"
  // (S3 and GCS require it).
  bool add_content_sha256_header = false;
  // With a session token: sign the token (true, the norm). False adds it to
  // the request after signing, unsigned (some services require that).
  bool sign_session_token = true;
};

// S3 (and S3-compatible stores): service "s3", path signed as sent (no
// second encoding, no normalization), x-amz-content-sha256 added.
SigV4Config S3SigV4Config(std::string region);

// GCS XML API with HMAC keys: GOOG4 names, service "storage", region "auto"
// unless given, path signed as sent, x-goog-content-sha256 added.
SigV4Config GcsHmacConfig(std::string region = "auto");

// Other AWS services: path normalized and encoded twice.
SigV4Config ServiceSigV4Config(std::string region, std::string service);

struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;       // lower-case hex HMAC-SHA256
  std::string signed_headers;  // e.g. "host;x-amz-date"
  // Header signing: the headers to append to the request, in this order:
  // session token (if any), date, content hash (if configured), Authorization.
  std::vector<SigningHeader> headers_to_add;
  // Presigning: the (decoded) query parameters to append, in this order:
  // Algorithm, Credential, Date, SignedHeaders, Expires, Security-Token (if
  // any), Signature. Encode them with EncodeQueryString.
  std::vector<SigningQueryParam> query_to_add;
};

// Longest presigned validity SigV4 allows: 7 days.
inline constexpr int64_t kMaxPresignSeconds = 604800;

// Signs `request` for the Authorization header at `unix_time` (seconds,
// UTC). The request's headers must include Host and must not already hold
// the headers the signer adds (Authorization, <prefix>Date, the content hash
// when configured, the security token when there is one). All of the
// request's headers are signed: leave out any the caller does not want
// signed (e.g. User-Agent). `payload_hash` must be set.
Result<SigV4Signature> SignSigV4Headers(const SigningRequest& request,
                                        const SigV4Credentials& credentials,
                                        const SigV4Config& config, int64_t unix_time);

// Presigns `request` (query signing) valid for `expires_seconds` in
// [1, kMaxPresignSeconds] from `unix_time`. The request's query must not
// already hold the parameters the signer adds. `payload_hash` must be set
// (S3 presigned URLs use "UNSIGNED-PAYLOAD"). The content hash header is
// never added.
Result<SigV4Signature> PresignSigV4(const SigningRequest& request,
                                    const SigV4Credentials& credentials,
                                    const SigV4Config& config, int64_t unix_time,
                                    int64_t expires_seconds);

// "name=value&name=value" with names and values UriEncode'd, in the order
// given (not sorted): for appending `query_to_add` to a URL.
std::string EncodeQueryString(const std::vector<SigningQueryParam>& params);

// The derived signing key HMAC(HMAC(HMAC(HMAC(prefix+secret, date), region),
// service), terminator) for `date` "YYYYMMDD". A secret: do not log it.
std::string DeriveSigV4SigningKey(const SigV4Scheme& scheme, std::string_view secret,
                                  std::string_view date, std::string_view region,
                                  std::string_view service);

}  // namespace sluice

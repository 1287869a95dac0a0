// OCI API request signatures as the OCI SDKs make them (draft-cavage HTTP
// signatures, "Signature version 1", rsa-sha256): the signing string of the
// headers "date (request-target) host", plus "content-length content-type
// x-content-sha256" for requests that sign their body (PUT, POST), one
// "name: value" line each; signed with the API key; sent as
//   Authorization: Signature algorithm="rsa-sha256",headers="...",
//     keyId="<tenancy>/<user>/<fingerprint>",signature="<base64>",version="1"
// Pure functions; thread-safe. The private key, its passphrase and the
// signature are secrets: error text never holds them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct OciRequestToSign {
  std::string method;  // "GET", "HEAD", "PUT", ...
  std::string host;    // the Host header: host, or host:port when the URL names a port
  std::string target;  // path and query exactly as sent
  std::string date;    // the Date header, RFC 1123 ("Thu, 05 Jan 2014 21:31:40 GMT")
  // False for the X.509 federation request of instance principals, which
  // the SDK signs over "date (request-target)" (and the body's headers) only.
  bool sign_host = true;
  // Body requests (PUT, POST) sign these as well.
  bool sign_body = false;
  uint64_t content_length = 0;
  std::string content_type;
  std::string content_sha256_b64;  // base64 of the body's SHA-256 (x-content-sha256)
};

struct OciApiKey {
  std::string key_id;           // "<tenancy OCID>/<user OCID>/<fingerprint>"
  std::string private_key_pem;  // secret
  std::string passphrase;       // secret; "" for an unencrypted key
  std::string what;             // names the key in errors, e.g. its file
};

// The RFC 1123 date of unix time `t` (GMT), as the Date header carries it.
std::string OciHttpDate(int64_t t);

// The signing string (lines joined by '\n', no trailing newline).
std::string OciSigningString(const OciRequestToSign& request);

// The Authorization header's value. Errors: the key's (RsaSha256Sign).
Result<std::string> OciAuthorization(const OciRequestToSign& request, const OciApiKey& key);

}  // namespace sluice

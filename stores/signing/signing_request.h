// The parts of an HTTP request that request signers read (SigV4, GCS HMAC,
// Azure SharedKey). A plain value: no I/O, no ownership of anything outside.
// Distinct from stores/http's HttpRequest (what the client sends): a store
// fills a SigningRequest from the same URL and headers, signs it, and copies
// the headers or query parameters the signer returns into its HttpRequest.
// The functions below are pure and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ascii.h"

namespace sluice {

// One header as it goes on the wire (name in any case, value untrimmed).
struct SigningHeader {
  std::string name;
  std::string value;
};

// One query parameter, percent-DECODED: signers encode it themselves, so
// "a b" here is sent and signed as "a%20b".
struct SigningQueryParam {
  std::string name;
  std::string value;
};

// None of either, for the stores' request builders that take both.
inline std::vector<SigningQueryParam> NoQuery() { return {}; }
inline std::vector<SigningHeader> NoHeaders() { return {}; }

// A request to sign.
//
// `path` is the path exactly as it is sent on the request line, without the
// query (e.g. "/bucket/my%20key"; build it with EncodeUriPath for object
// keys). `query` holds the decoded parameters in the order they are sent.
// `headers` are the headers to sign, in the order they are sent; repeated
// names are allowed and keep their order. `payload_hash` is the lower-case hex
// SHA-256 of the body (Sha256Hex) or a literal such as "UNSIGNED-PAYLOAD"; it
// is used by SigV4 only.
struct SigningRequest {
  std::string method = "GET";
  std::string path = "/";
  std::vector<SigningQueryParam> query;
  std::vector<SigningHeader> headers;
  std::string payload_hash;
};

// Values of every header named `name` (ASCII case-insensitive), in order.
// The views point into `request` and live as long as it is not modified.
std::vector<std::string_view> FindHeaderValues(const SigningRequest& request,
                                               std::string_view name);

// True when a header named `name` (ASCII case-insensitive) is present.
bool HasHeader(const SigningRequest& request, std::string_view name);

}  // namespace sluice

// The building blocks of a SigV4 (and GCS V4) canonical request: canonical
// URI, canonical query string, canonical headers and the signed-header list.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "stores/signing/signing_request.h"

namespace sluice {

// How the path as sent becomes the canonical URI.
struct CanonicalUriRules {
  // Services other than S3 (and GCS) percent-encode the already-encoded path
  // once more ("%20" -> "%2520"); S3 and GCS sign the path as sent.
  bool double_encode = true;
  // Services other than S3 (and GCS) remove "." / ".." and empty segments
  // first (NormalizeUriPath); S3 and GCS keep the path exactly.
  bool normalize = true;
};

// Canonical URI of `path` (the path as sent, starting with '/'; empty means
// "/"). InvalidArgument when a non-empty path does not start with '/'.
Result<std::string> CanonicalUri(std::string_view path, const CanonicalUriRules& rules);

// Canonical query string: names and values UriEncode'd, pairs sorted by
// encoded name then encoded value, written "name=value" joined with '&'.
// Empty for no parameters.
std::string CanonicalQueryString(const std::vector<SigningQueryParam>& params);

// Canonical form of one header value: leading and trailing whitespace
// removed, every inner run of whitespace (space, tab, CR, LF) made one space.
std::string CanonicalHeaderValue(std::string_view value);

struct CanonicalHeaders {
  // "name:value\n" per distinct lower-case name, sorted by name; repeated
  // headers' values are joined with ',' in the order sent.
  std::string block;
  // The sorted lower-case names joined with ';', e.g. "host;x-amz-date".
  std::string signed_headers;
};

// Canonical headers of `headers`. InvalidArgument when a name is empty or
// holds a byte that is not an RFC 9110 token character (the message names
// the header's index, not its value).
Result<CanonicalHeaders> MakeCanonicalHeaders(const std::vector<SigningHeader>& headers);

}  // namespace sluice

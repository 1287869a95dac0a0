// http:// and https:// URLs: parsing, the pieces a request needs, redirect
// targets, and redaction for error messages.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct Url {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // lower case; an IPv6 literal without its brackets
  uint16_t port = 0;   // explicit, or 80 / 443 by scheme
  bool explicit_port = false;
  std::string target;  // path and query, never empty, starts with '/'

  bool is_tls() const { return scheme == "https"; }
  bool is_ipv6_literal() const { return host.find(':') != std::string::npos; }
  // "host", "host:8080", "[::1]:8080": the Host header (port only if explicit).
  std::string Authority() const;
  // "https://host:443": one connection pool per key.
  std::string PoolKey() const;
  // The whole URL, fragment dropped.
  std::string ToString() const;
  // The URL for error text and logs: the value of every query parameter not
  // known to be harmless (listing, paging, SAS metadata, the unsigned parts
  // of presigned URLs; see url.cc) becomes "REDACTED".
  std::string Redacted() const;
};

// Parses an absolute http(s) URL. Errors (kInvalidArgument) name the problem
// and quote the URL redacted: unknown scheme, empty or malformed host, bad
// port, user info (credentials in URLs are refused), spaces or control
// characters.
Result<Url> ParseUrl(std::string_view url);

// The target of a redirect: `location` is absolute ("https://..."),
// scheme-relative ("//host/path"), absolute-path ("/path") or relative
// ("file", resolved against the base's folder).
Result<Url> ResolveRedirect(const Url& base, std::string_view location);

// Redacts a URL string that may not parse (see Url::Redacted()); anything
// unparsable keeps only its scheme and authority-ish prefix up to '?'.
std::string RedactUrl(std::string_view url);

}  // namespace sluice

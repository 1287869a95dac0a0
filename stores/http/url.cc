#include "stores/http/url.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "base/ascii.h"

namespace sluice {
namespace {

// Query parameters whose values are known to carry no secret: listing and
// paging (S3, GCS, Azure), the unsigned parts of presigned S3/GCS URLs and
// Azure SAS tokens, multipart bookkeeping, and a few harmless OAuth2 ones.
// Every other value is redacted in errors and logs: a new credential
// parameter (`apikey2`, a vendor's token name) is hidden by default, at the
// cost of an occasional harmless value shown as REDACTED.
bool IsHarmlessParam(std::string_view key) {
  static constexpr std::string_view kHarmless[] = {
      // S3 ListObjects / multipart / object addressing
      "list-type", "max-keys", "prefix", "delimiter", "continuation-token", "start-after",
      "marker", "encoding-type", "fetch-owner", "uploadid", "partnumber", "uploads",
      "versionid", "delete", "x-id",
      // presigned S3 and GCS URLs, without their credential and signature
      "x-amz-algorithm", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
      "x-goog-algorithm", "x-goog-date", "x-goog-expires", "x-goog-signedheaders", "expires",
      // GCS JSON/XML API
      "alt", "pagetoken", "page_token", "nextpagetoken", "next_page_token", "maxresults",
      "max-results", "uploadtype", "name", "generation", "fields", "projection",
      // Azure Blob / ADLS, and the unsigned fields of a SAS
      "restype", "comp", "include", "blockid", "blocklisttype", "timeout", "resource",
      "recursive", "directory", "continuation", "continuationtoken", "action", "position",
      "sv", "ss", "srt", "sp", "se", "st", "spr", "sr", "sip", "si", "skoid", "sktid", "skt",
      "ske", "sks", "skv", "sdd", "rscc", "rscd", "rsce", "rscl", "rsct",
      // OAuth2 redirects: the state and session markers, not the code
      "state", "session", "scope"};
  std::string k = AsciiToLower(key);
  for (std::string_view harmless : kHarmless) {
    if (k == harmless) return true;
  }
  return false;
}

std::string RedactQuery(std::string_view query) {
  std::string out;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view param = query.substr(pos, amp - pos);
    size_t eq = param.find('=');
    std::string_view key = param.substr(0, eq);
    if (!out.empty() || pos > 0) out += '&';
    if (eq != std::string_view::npos && !IsHarmlessParam(key)) {
      out.append(key);
      out += "=REDACTED";
    } else {
      out.append(param);
    }
    pos = amp + 1;
  }
  return out;
}

std::string RedactTarget(std::string_view target) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  return std::string(target.substr(0, q + 1)) + RedactQuery(target.substr(q + 1));
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

std::string RedactUnparsed(std::string_view url);

}  // namespace

std::string Url::Authority() const {
  std::string out = is_ipv6_literal() ? "[" + host + "]" : host;
  if (explicit_port) out += ":" + std::to_string(port);
  return out;
}

std::string Url::PoolKey() const {
  std::string h = is_ipv6_literal() ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port);
}

std::string Url::ToString() const { return scheme + "://" + Authority() + target; }

std::string Url::Redacted() const {
  return scheme + "://" + Authority() + RedactTarget(target);
}

namespace {
// For text that may not parse: never echo user info or secret query values.
std::string RedactUnparsed(std::string_view url) {
  std::string_view head = url.substr(0, url.find_first_of("?#"));
  size_t at = head.find('@');
  if (at != std::string_view::npos) {
    size_t scheme_end = head.find("://");
    std::string prefix = scheme_end == std::string_view::npos
                             ? std::string()
                             : std::string(head.substr(0, scheme_end + 3));
    return prefix + "REDACTED@" + std::string(head.substr(at + 1));
  }
  std::string out(head);
  if (head.size() < url.size() && url[head.size()] == '?') {
    out += "?" + RedactQuery(url.substr(head.size() + 1, url.find('#') - head.size() - 1));
  }
  return out;
}
}  // namespace

std::string RedactUrl(std::string_view url) {
  Result<Url> parsed = ParseUrl(url);
  return parsed.ok() ? parsed->Redacted() : RedactUnparsed(url);
}

Result<Url> ParseUrl(std::string_view text) {
  auto fail = [&](std::string why) {
    return InvalidArgumentError("malformed URL '" + RedactUnparsed(text) + "': " + why);
  };
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return fail("contains a space or control character (percent-encode it)");
    }
  }
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) return fail("expected scheme://host/path");
  Url url;
  url.scheme = AsciiToLower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https") {
    // Quote only what can be a scheme: text before a "://" further on (in
    // a query value, say) may hold the query's secrets.
    const bool scheme_like =
        !url.scheme.empty() && url.scheme.size() <= 32 &&
        url.scheme.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789+-.") ==
            std::string::npos;
    return fail(scheme_like ? "scheme '" + url.scheme + "' is not http or https"
                            : std::string("expected scheme://host/path"));
  }
  std::string_view rest = text.substr(sep + 3);
  rest = rest.substr(0, rest.find('#'));
  size_t auth_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, auth_end);
  std::string_view target =
      auth_end == std::string_view::npos ? std::string_view() : rest.substr(auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return fail("user info in URLs is not supported (pass credentials separately)");
  }
  std::string_view port_text;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 literal");
    url.host = AsciiToLower(authority.substr(1, close - 1));
    in6_addr addr;
    if (inet_pton(AF_INET6, url.host.c_str(), &addr) != 1) {
      return fail("'" + url.host + "' is not an IPv6 address");
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return fail("expected ':port' after the IPv6 literal");
      port_text = after.substr(1);
      if (port_text.empty()) return fail("empty port");
    }
  } else {
    size_t colon = authority.find(':');
    url.host = AsciiToLower(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return fail("empty port");
    }
    if (url.host.empty()) return fail("empty host");
    if (!std::all_of(url.host.begin(), url.host.end(), IsHostChar) ||
        url.host.front() == '.' || url.host.front() == '-' ||
        url.host.find("..") != std::string::npos) {
      return fail("invalid host name '" + url.host + "'");
    }
  }
  if (!port_text.empty()) {
    if (port_text.size() > 5 ||
        !std::all_of(port_text.begin(), port_text.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      return fail("port '" + std::string(port_text) + "' is not a number");
    }
    unsigned long port = std::stoul(std::string(port_text));
    if (port == 0 || port > 65535) {
      return fail("port " + std::to_string(port) + " is out of range 1-65535");
    }
    url.port = static_cast<uint16_t>(port);
    url.explicit_port = true;
  } else {
    url.port = url.is_tls() ? 443 : 80;
  }
  if (target.empty()) {
    url.target = "/";
  } else if (target[0] == '?') {
    url.target = "/" + std::string(target);
  } else {
    url.target = std::string(target);
  }
  return url;
}

Result<Url> ResolveRedirect(const Url& base, std::string_view location) {
  if (location.empty()) return InvalidArgumentError("empty Location header");
  if (location.find("://") != std::string_view::npos &&
      location.find("://") < location.find_first_of("/?")) {
    return ParseUrl(location);
  }
  if (location.substr(0, 2) == "//") return ParseUrl(base.scheme + ":" + std::string(location));
  Url out = base;
  if (location[0] == '/') {
    out.target = std::string(location);
  } else {
    std::string path = base.target.substr(0, base.target.find('?'));
    out.target = path.substr(0, path.rfind('/') + 1) + std::string(location);
  }
  out.target = out.target.substr(0, out.target.find('#'));
  for (char c : out.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgumentError("malformed redirect Location: contains a space or control character");
    }
  }
  return out;
}

}  // namespace sluice

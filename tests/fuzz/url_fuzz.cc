// URLs (stores/http/url.h): ParseUrl, ResolveRedirect, RedactUrl.
// Input: a control byte picking a base URL, then the text (a URL, or a
// redirect Location against the base).
// Checks: a parsed URL is http(s) with a host and a target starting with
// '/', and its ToString() parses back to the same URL; a redirect target is
// a valid URL the same way; no secret leaves through redaction: every
// query value not known harmless is gone from RedactUrl's output and from
// ParseUrl's error text, and Redacted() keeps scheme, host, port and path.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stores/http/url.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

bool SameUrl(const sluice::Url& a, const sluice::Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port && a.target == b.target;
}

void CheckUrl(const sluice::Url& u, const char* what) {
  FUZZ_CHECK(u.scheme == "http" || u.scheme == "https", "%s: scheme %s", what,
             u.scheme.c_str());
  FUZZ_CHECK(!u.host.empty(), "%s: empty host", what);
  FUZZ_CHECK(!u.target.empty() && u.target[0] == '/', "%s: target '%s'", what,
             u.target.c_str());
  auto again = sluice::ParseUrl(u.ToString());
  FUZZ_CHECK(again.ok(), "%s: ToString() '%s' does not parse: %s", what, u.ToString().c_str(),
             again.status().message().c_str());
  FUZZ_CHECK(SameUrl(u, *again), "%s: '%s' parses to another URL", what,
             u.ToString().c_str());
  auto red = sluice::ParseUrl(u.Redacted());
  if (red.ok()) {
    FUZZ_CHECK(red->scheme == u.scheme && red->host == u.host && red->port == u.port);
    FUZZ_CHECK(red->target.substr(0, red->target.find('?')) ==
               u.target.substr(0, u.target.find('?')), "redaction changed the path");
  }
}

// "key=value" pairs of the query in `text` whose value must not be shown:
// values of 6+ bytes (shorter ones match too easily by chance), other than
// REDACTED, for keys that are not obviously harmless paging or listing
// parameters, found first in the query (not also earlier in the text).
std::vector<std::string> Secrets(std::string_view text) {
  std::vector<std::string> out;
  size_t q = text.find('?');
  if (q == std::string_view::npos) return out;
  std::string_view query = text.substr(q + 1);
  query = query.substr(0, query.find('#'));
  size_t pos = 0;
  while (pos < query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view param = query.substr(pos, amp - pos);
    size_t eq = param.find('=');
    if (eq != std::string_view::npos) {
      std::string key(param.substr(0, eq));
      std::string_view value = param.substr(eq + 1);
      bool secret_key = false;
      for (const char* k : {"sig", "signature", "x-amz-signature", "x-amz-security-token",
                            "x-amz-credential", "x-goog-signature", "x-goog-credential",
                            "token", "access_token", "apikey", "api_key", "key", "password"}) {
        std::string lower;
        for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower == k || lower.find("secret") != std::string::npos ||
            lower.find("apikey") != std::string::npos) {
          secret_key = true;
        }
      }
      if (secret_key && value.size() >= 6 && value != "REDACTED" &&
          value.find("REDACTED") == std::string_view::npos) {
        std::string pair = std::string(param);
        // Only a pair that occurs once: the same text inside another
        // (harmless) parameter's value is that value, shown as such.
        // Nor a pair the redaction itself spells ("sig=REDACT").
        if ((key + "=REDACTED").rfind(pair, 0) == 0) {
          pos = amp + 1;
          continue;
        }
        size_t first = text.find(pair);
        if (first > q && text.find(pair, first + 1) == std::string_view::npos) {
          out.push_back(pair);
        }
      }
    }
    pos = amp + 1;
  }
  return out;
}

const char* kBases[] = {
    "https://bucket.s3.amazonaws.com/data/index.json?X-Amz-Signature=abcdef123456",
    "http://127.0.0.1:8080/a/b/c.mds",
    "https://[::1]:9000/d/",
    "https://example.com",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::fuzz::Input in(data, size);
  const uint8_t control = in.Byte();
  const std::string_view text = in.Rest();

  const std::string redacted = sluice::RedactUrl(text);
  auto parsed = sluice::ParseUrl(text);
  for (const std::string& secret : Secrets(text)) {
    FUZZ_CHECK(redacted.find(secret) == std::string::npos, "RedactUrl shows '%s'",
               secret.c_str());
    if (!parsed.ok()) {
      FUZZ_CHECK(parsed.status().message().find(secret) == std::string::npos,
                 "ParseUrl's error shows '%s'", secret.c_str());
    }
  }
  if (parsed.ok()) CheckUrl(*parsed, "ParseUrl");

  const sluice::Url base = *sluice::ParseUrl(kBases[control % 4]);
  auto target = sluice::ResolveRedirect(base, text);
  if (target.ok()) {
    CheckUrl(*target, "ResolveRedirect");
  } else {
    for (const std::string& secret : Secrets(text)) {
      FUZZ_CHECK(target.status().message().find(secret) == std::string::npos,
                 "ResolveRedirect's error shows '%s'", secret.c_str());
    }
  }
  return 0;
}

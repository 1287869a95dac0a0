// URLs (stores/http/url.h): ParseUrl, ResolveRedirect, RedactUrl.
// Input: a control byte picking a base URL, then the text (a URL, or a
// redirect Location against the base).
// Checks: a parsed URL is http(s) with a host and a target starting with
// '/', and its ToString() parses back to the same URL; a redirect target is
// a valid URL the same way; no secret leaves through redaction: masking the
// secret query values changes neither RedactUrl's output nor ParseUrl's or
// ResolveRedirect's error text, and Redacted() keeps scheme, host, port and
// path.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

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

// Keys whose values redaction must hide (none of them is on url.cc's
// harmless list): credentials, signatures, tokens, keys, passwords.
bool IsSecretKey(std::string_view key) {
  std::string lower;
  for (char c : key) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* k : {"sig", "signature", "x-amz-signature", "x-amz-security-token",
                        "x-amz-credential", "x-goog-signature", "x-goog-credential", "token",
                        "access_token", "apikey", "api_key", "key", "password"}) {
    if (lower == k) return true;
  }
  return lower.find("secret") != std::string::npos || lower.find("apikey") != std::string::npos;
}

// `text` with every letter and digit of each secret query value replaced by
// another ('v', or 'w' for a 'v'). Punctuation, spaces and control bytes
// stay, so the text parses (or fails) the same way. Whatever is derived
// from the text without the secrets is then the same for both: comparing
// the two outputs finds a leak of any length, and cannot be fooled by a
// secret that happens to equal shown text followed by fixed message text
// (as "key=AIzaS" ending the shown part of a URL followed by "': contai").
std::string MaskSecretValues(std::string_view text) {
  std::string out(text);
  size_t q = text.find('?');
  if (q == std::string_view::npos) return out;
  const size_t end = std::min(text.find('#', q), text.size());
  size_t pos = q + 1;
  while (pos < end) {
    size_t amp = std::min(text.find('&', pos), end);
    std::string_view param = text.substr(pos, amp - pos);
    size_t eq = param.find('=');
    if (eq != std::string_view::npos && IsSecretKey(param.substr(0, eq))) {
      for (size_t i = pos + eq + 1; i < amp; ++i) {
        if (std::isalnum(static_cast<unsigned char>(out[i]))) out[i] = out[i] == 'v' ? 'w' : 'v';
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

  const std::string masked = MaskSecretValues(text);
  FUZZ_CHECK(sluice::RedactUrl(text) == sluice::RedactUrl(masked),
             "RedactUrl shows a secret value: '%s' vs '%s'", sluice::RedactUrl(text).c_str(),
             sluice::RedactUrl(masked).c_str());
  auto parsed = sluice::ParseUrl(text);
  auto parsed_masked = sluice::ParseUrl(masked);
  FUZZ_CHECK(parsed.ok() == parsed_masked.ok(), "a secret value decides whether a URL parses");
  if (parsed.ok()) {
    CheckUrl(*parsed, "ParseUrl");
  } else {
    FUZZ_CHECK(parsed.status().message() == parsed_masked.status().message(),
               "ParseUrl's error shows a secret value: '%s' vs '%s'",
               parsed.status().message().c_str(), parsed_masked.status().message().c_str());
  }

  const sluice::Url base = *sluice::ParseUrl(kBases[control % 4]);
  auto target = sluice::ResolveRedirect(base, text);
  if (target.ok()) {
    CheckUrl(*target, "ResolveRedirect");
  } else {
    auto target_masked = sluice::ResolveRedirect(base, masked);
    FUZZ_CHECK(!target_masked.ok(), "a secret value decides whether a redirect resolves");
    FUZZ_CHECK(target.status().message() == target_masked.status().message(),
               "ResolveRedirect's error shows a secret value: '%s' vs '%s'",
               target.status().message().c_str(), target_masked.status().message().c_str());
  }
  return 0;
}

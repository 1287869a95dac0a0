#include "stores/credentials/gcs_access_token.h"

#include <algorithm>
#include <cstdlib>

#include "formats/json/py_json.h"
#include "stores/credentials/blocking_http.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

// Google's client libraries wait about as long for a token.
constexpr int64_t kGoogleEndpointTimeoutMs = 10000;

bool PlainErrorCode(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
             std::string::npos;
}

}  // namespace

Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source) {
  auto parsed = ParsePyJson(body);
  AccessToken out;
  if (parsed.ok()) {
    out.token = JsonStringMember(*parsed, "access_token");
    if (const JsonValue* expires_in = JsonMember(*parsed, "expires_in")) {
      if (const auto* i = std::get_if<int64_t>(&expires_in->v)) out.expires_in = *i;
      if (const auto* s = std::get_if<std::string>(&expires_in->v)) {
        char* end = nullptr;
        long long v = std::strtoll(s->c_str(), &end, 10);
        if (!s->empty() && *end == '\0') out.expires_in = v;
      }
    }
  }
  if (out.token.empty()) {
    return PermissionDeniedError(
                  std::string(source) + " answered without an access_token");
  }
  return out;
}

Credential BearerCredential(std::string source, AccessToken token, int64_t now) {
  Credential c;
  c.source = std::move(source);
  c.bearer = std::move(token.token);
  // An untrusted number: clamped so that the sum cannot overflow.
  c.expires_at = now + std::clamp<int64_t>(token.expires_in, 0, int64_t{366} * 24 * 3600);
  return c;
}

HttpClientOptions GoogleEndpointOptions() {
  HttpClientOptions o = CredentialEndpointOptions(kGoogleEndpointTimeoutMs);
  o.error_detail = [](std::string_view body) -> std::string {
    auto parsed = ParsePyJson(body);
    if (!parsed.ok()) return "";
    std::string code = JsonStringMember(*parsed, "error");
    if (PlainErrorCode(code)) return code;
    if (const JsonValue* error = JsonMember(*parsed, "error")) {
      std::string status = JsonStringMember(*error, "status");
      if (PlainErrorCode(status)) return status;
    }
    return "";
  };
  return o;
}

std::string FormBody(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (value.empty()) continue;
    if (!out.empty()) out += '&';
    out += UriEncode(name) + "=" + UriEncode(value);
  }
  return out;
}

Result<HttpResponse> PostToGoogle(std::string url, std::string body, std::string_view what,
                                  std::vector<std::pair<std::string, std::string>> headers,
                                  std::string content_type) {
  HttpRequest req;
  req.method = HttpMethod::kPost;
  req.url = std::move(url);
  req.headers.emplace_back("content-type", std::move(content_type));
  for (auto& h : headers) req.headers.push_back(std::move(h));
  req.body = std::move(body);
  auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
  if (!resp.ok()) {
    // A refusal (Google answers 400 invalid_grant as often as 401 or 403)
    // or a missing endpoint is a credential that does not work; timeouts
    // and unavailability keep their codes.
    StatusCode code = resp.status().code();
    if (code == StatusCode::kNotFound || code == StatusCode::kIoError) {
      code = StatusCode::kPermissionDenied;
    }
    return Status(code, std::string(what) + " failed: " + resp.status().message());
  }
  return resp;
}

}  // namespace sluice

#include "stores/credentials/gcs_access_token.h"

#include <algorithm>

#include "formats/json/py_json.h"

namespace sluice {

Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source) {
  auto parsed = ParsePyJson(body);
  AccessToken out;
  if (parsed.ok()) {
    out.token = JsonStringMember(*parsed, "access_token");
    if (const JsonValue* expires_in = JsonMember(*parsed, "expires_in")) {
      if (const auto* i = std::get_if<int64_t>(&expires_in->v)) out.expires_in = *i;
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

}  // namespace sluice

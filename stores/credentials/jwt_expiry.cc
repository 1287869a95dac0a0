#include "stores/credentials/jwt_expiry.h"

#include <string>

#include "formats/json/py_json.h"
#include "stores/signing/jwt_rs256.h"

namespace sluice {

std::optional<int64_t> JwtExpiry(std::string_view token) {
  const std::optional<std::string> json = JwtClaimsText(token);
  if (!json) return std::nullopt;
  auto claims = ParsePyJson(*json);
  const JsonValue* exp = claims.ok() ? JsonMember(*claims, "exp") : nullptr;
  const auto* seconds = exp ? std::get_if<int64_t>(&exp->v) : nullptr;
  if (seconds == nullptr) return std::nullopt;
  return *seconds;
}

}  // namespace sluice

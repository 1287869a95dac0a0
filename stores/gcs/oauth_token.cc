#include "stores/gcs/oauth_token.h"

#include <ctime>

#include "formats/json/py_json.h"

namespace sluice {

Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source) {
  auto parsed = ParsePyJson(body);
  const auto* object = parsed.ok() ? std::get_if<JsonValue::Object>(&parsed->v) : nullptr;
  AccessToken out;
  if (object != nullptr) {
    for (const auto& [name, value] : *object) {
      if (name == "access_token") {
        if (const auto* s = std::get_if<std::string>(&value.v)) out.token = *s;
      } else if (name == "expires_in") {
        if (const auto* i = std::get_if<int64_t>(&value.v)) out.expires_in = *i;
      }
    }
  }
  if (out.token.empty()) {
    return PermissionDeniedError(
                  std::string(source) + " answered without an access_token");
  }
  return out;
}

boost::asio::awaitable<Result<std::string>> CachingTokenSource::Token(HttpClient& client) {
  int64_t now = clock_ ? clock_() : static_cast<int64_t>(std::time(nullptr));
  if (!token_.empty() && now + 60 < expires_at_) co_return token_;
  Result<AccessToken> fresh = co_await Fetch(client, now);
  if (!fresh.ok()) co_return fresh.status();
  token_ = std::move(fresh->token);
  expires_at_ = now + fresh->expires_in;
  co_return token_;
}

}  // namespace sluice

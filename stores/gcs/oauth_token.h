// What the two GCS bearer-token sources share: parsing an OAuth2 token
// response ({"access_token": ..., "expires_in": ...}) and caching the token
// until a minute before it expires.
//
// Access tokens are secrets: they never appear in error text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "base/status.h"
#include "stores/credentials/bearer_token_source.h"

namespace sluice {

struct AccessToken {
  std::string token;        // a secret
  int64_t expires_in = 3600;  // seconds; 3600 when the response omits it
};

// Parses a token endpoint's JSON answer. kPermissionDenied naming `source`
// (a URL or account, no secret) when it is not JSON or has no access_token.
Result<AccessToken> ParseAccessTokenResponse(std::string_view body, std::string_view source);

// A BearerTokenSource that asks Fetch() for a new token only when it holds
// none valid for another minute. Used from the store's executor only (not
// thread-safe). `clock` (unix seconds) is for tests; null: the real clock.
class CachingTokenSource : public BearerTokenSource {
 public:
  explicit CachingTokenSource(int64_t (*clock)()) : clock_(clock) {}
  boost::asio::awaitable<Result<std::string>> Token(HttpClient& client) final;

 protected:
  // A fresh token; `now` is the clock's time, for tokens signed with it.
  virtual boost::asio::awaitable<Result<AccessToken>> Fetch(HttpClient& client, int64_t now) = 0;

 private:
  int64_t (*clock_)();
  std::string token_;  // a secret
  int64_t expires_at_ = 0;
};

}  // namespace sluice

// Supplies OAuth2 bearer tokens to a store (GCS today); awaited on the
// store's executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>

#include "base/status.h"
#include "stores/http/http_client.h"

namespace sluice {

class BearerTokenSource {
 public:
  virtual ~BearerTokenSource() = default;
  // A token valid for at least a minute (a secret); errors name what to fix.
  // Awaited on `client`'s executor; not thread-safe unless the
  // implementation says so.
  virtual boost::asio::awaitable<Result<std::string>> Token(HttpClient& client) = 0;
};

}  // namespace sluice

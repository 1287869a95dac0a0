#include "stores/http/redirect_policy.h"

#include <algorithm>

#include "base/ascii.h"

namespace sluice {

bool IsCredentialHeader(std::string_view name) {
  for (std::string_view exact : {"authorization", "proxy-authorization", "cookie"}) {
    if (AsciiEqualsIgnoreCase(name, exact)) return true;
  }
  for (std::string_view prefix : {"x-amz-", "x-ms-", "x-goog-"}) {
    if (AsciiStartsWithIgnoreCase(name, prefix)) return true;
  }
  return false;
}

Status PrepareRedirect(HttpRequest& request, const Url& from, const Url& to) {
  if (from.PoolKey() == to.PoolKey()) return Status::Ok();
  const bool has_credentials =
      std::any_of(request.headers.begin(), request.headers.end(),
                  [](const auto& h) { return IsCredentialHeader(h.first); });
  if (has_credentials && from.is_tls() && !to.is_tls()) {
    return PermissionDeniedError("refusing to follow a redirect of a request with credentials "
                                 "from " + from.Redacted() + " to plain HTTP " + to.Redacted());
  }
  std::erase_if(request.headers, [](const auto& h) { return IsCredentialHeader(h.first); });
  return Status::Ok();
}

}  // namespace sluice

// What a request may carry to where a redirect points. Credentials are for
// the origin they were made for: when the scheme, host or port changes,
// every header that authenticates (Authorization, Cookie, and the stores'
// signing and token headers x-amz-*, x-ms-*, x-goog-*) is dropped, and a
// request that carried any is never followed from https to http. Pure
// functions; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/http/url.h"

namespace sluice {

// True for a header that authenticates or signs a request.
bool IsCredentialHeader(std::string_view name);

// Readies `request` (headers) for following a redirect from `from` to `to`.
// kPermissionDenied (naming both origins, redacted) for an https -> http
// downgrade of a request carrying credentials; the request is unchanged then.
Status PrepareRedirect(HttpRequest& request, const Url& from, const Url& to);

}  // namespace sluice

// hf://[datasets/|spaces/|models/]ORG/NAME[@REVISION][/PATH] (hf_url.h):
// read-only access to a Hugging Face Hub repository through the Hub's HTTP
// API, as huggingface_hub's HfFileSystem reads it:
//   - objects: {endpoint}/{datasets/}ORG/NAME/resolve/{revision}/{path},
//     ranged, following the Hub's redirect to its CDN (which never receives
//     the token: stores/http/redirect_policy.h drops Authorization when the
//     origin changes);
//   - listings: {endpoint}/api/{type}s/ORG/NAME/tree/{revision}/{folder}
//     ?recursive=true, page after page by the Link header (rel="next"),
//     pages only from the endpoint's own origin.
// A 429 is retried after the server's Retry-After (stores/http).
//
// Environment: HF_ENDPOINT (default https://huggingface.co); the token as
// huggingface_hub finds it (stores/credentials/hf_token.h), sent as
// "Authorization: Bearer"; none when HF_HUB_DISABLE_IMPLICIT_TOKEN is set or
// no source applies (public repositories). The token is never put in error
// text. Put and PutFile answer kUnimplemented.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

Result<std::unique_ptr<Store>> OpenHfStore(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options);

// What `sluice whoami` prints for an hf:// URL: the endpoint, repository and
// revision, and which token source requests use (never the token), with
// every source tried, or why they go anonymous. Reads the environment and
// the token file; no request is sent.
Result<std::string> DescribeHfAuth(std::string_view url);

// The URL of the Link header's rel="next" entry (`link` is the header's
// value, e.g. `<https://huggingface.co/api/...&cursor=x>; rel="next"`), or
// "" when it has none. Pure; thread-safe.
std::string NextPageLink(std::string_view link);

}  // namespace sluice

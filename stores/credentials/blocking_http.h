// One HTTP request sent from a plain thread (not a store's executor), for
// credential sources: they run on the refresher thread or at store open,
// where nothing else runs an event loop. Each call makes a private Asio
// context and client and tears them down before returning, so nothing
// outlives it (nothing for a forked child to inherit).
#pragma once

#include "base/status.h"
#include "stores/http/http_client.h"

namespace sluice {

// Sends `request` with `options` (see HttpClient::Send for the errors) and
// waits for the answer. Blocks the calling thread; thread-safe. Never call
// it on an event loop's thread.
Result<HttpResponse> SendBlocking(HttpRequest request, HttpClientOptions options);

// Options for talking to credential endpoints: no retries beyond one, a
// short timeout (`timeout_ms` for the whole request), small bodies only.
HttpClientOptions CredentialEndpointOptions(int64_t timeout_ms);

}  // namespace sluice

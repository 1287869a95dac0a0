#include "stores/credentials/blocking_http.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>

#include "base/exception_status.h"

namespace sluice {

Result<HttpResponse> SendBlocking(HttpRequest request, HttpClientOptions options) {
  std::optional<Result<HttpResponse>> out;
  std::exception_ptr thrown = CatchAll([&] {
    boost::asio::io_context context;
    auto client = HttpClient::Create(context.get_executor(), std::move(options));
    if (!client.ok()) {
      out = client.status();
      return;
    }
    HttpClient& c = **client;
    boost::asio::co_spawn(
        context,
        [&c, &out, req = std::move(request)]() mutable -> boost::asio::awaitable<void> {
          out = co_await c.Send(std::move(req));
        },
        [&out](std::exception_ptr e) {
          if (e) out = StatusFromException(e, "credential request");
        });
    context.run();
    client->reset();
  });
  if (thrown) return StatusFromException(thrown, "credential request");
  if (!out) return InternalError("credential request did not complete");
  return std::move(*out);
}

HttpClientOptions CredentialEndpointOptions(int64_t timeout_ms) {
  HttpClientOptions o;
  o.download_retry = 1;
  o.download_timeout = std::chrono::milliseconds(timeout_ms);
  o.connect_timeout = std::chrono::milliseconds(timeout_ms);
  o.first_byte_timeout = std::chrono::milliseconds(timeout_ms);
  o.idle_timeout = std::chrono::milliseconds(timeout_ms);
  o.backoff_base = std::chrono::milliseconds(100);
  o.max_redirects = 0;  // credentials never follow a redirect
  o.max_buffered_body = uint64_t{1} << 20;
  return o;
}

}  // namespace sluice

// Receiving a response body and handing it on: into the caller's sink (one
// large buffer at a time, the next received while the sink writes the last)
// or the buffered body, trimmed to the span the request wants (see
// body_placement.h), with the idle and overall timeouts enforced.
//
// Internal to stores/http; the one unit besides http_exchange.cc that
// includes Beast's HTTP parser. Runs on the client's executor.
#pragma once

#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "stores/http/body_buffers.h"
#include "stores/http/body_placement.h"
#include "stores/http/connection_pool.h"
#include "stores/http/first_byte_time.h"
#include "stores/http/http_transfer.h"

namespace sluice::http_detail {

using ResponseParser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

// What an exchange needs of its client. Outlives every exchange.
struct ExchangeContext {
  boost::asio::any_io_executor executor;
  const HttpClientOptions& options;
  BodyBufferPool& buffers;
  FirstByteTime& first_byte;  // fed by every exchange without a request body
};

// Reads the body of the 2xx response whose head `parser` holds, from
// `stream` (lease's connection), delivering the span `placement` gives.
// kDone releases the lease for reuse when the server keeps the connection
// alive; any other outcome says why in `failure`.
template <typename Stream>
boost::asio::awaitable<AttemptResult> ReadBody(const ExchangeContext& ctx, Stream& stream,
                                               Lease& lease, ResponseParser& parser,
                                               Transfer& t, BodyPlacement placement,
                                               ScopedCancel& cancel);

// Up to 64 KiB of an error response's body, for its detail; errors reading
// it only shorten it.
template <typename Stream>
boost::asio::awaitable<std::string> ReadErrorBody(const ExchangeContext& ctx, Stream& stream,
                                                  Connection& conn, ResponseParser& parser,
                                                  const Transfer& t);

}  // namespace sluice::http_detail

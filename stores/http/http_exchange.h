// One HTTP exchange on a leased connection: write the request (head and
// body), read the response head, and turn it into an outcome: a redirect
// to follow, a failure (with the store's reading of an error body), or a
// 2xx whose body is placed and read (body_reader.h).
//
// Internal to stores/http; with body_reader.cc the only units that include
// Beast's HTTP. Runs on the client's executor.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "stores/http/body_reader.h"
#include "stores/http/connection_pool.h"
#include "stores/http/http_transfer.h"

namespace sluice::http_detail {

// Runs one request/response exchange for `t` on `lease`'s connection.
// t.response gets the first successful response's status and headers.
boost::asio::awaitable<AttemptResult> Exchange(const ExchangeContext& ctx, Lease& lease,
                                               Transfer& t);

}  // namespace sluice::http_detail

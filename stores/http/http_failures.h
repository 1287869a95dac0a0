// What a failed exchange means: the Status the caller sees (which request,
// what happened, which timeout) and whether another attempt may succeed.
// The one place that classifies HTTP failures; HttpRetryPolicy (retry_policy.h)
// decides from them whether and when to go again.
//
// Internal to stores/http. Pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/system/error_code.hpp>

#include "stores/http/http_client.h"
#include "stores/http/http_transfer.h"

namespace sluice::http_detail {

// The server closed or reset the connection (as opposed to a timeout or a
// local error): on a reused connection before any reply, a stale socket.
bool IsConnectionLoss(const boost::system::error_code& ec);

// A socket error or timeout `during` a step ("sending the request", ...):
// retryable; kDeadlineExceeded naming `timeout_name` (or download_timeout
// when the overall deadline is what ran out), else kIoError.
Failure TransportFailure(const Transfer& t, const HttpClientOptions& options,
                         std::string_view during, const boost::system::error_code& ec,
                         std::chrono::milliseconds timeout, std::string_view timeout_name);

// A non-2xx, non-redirect response: "<what>: <status line> (<detail>),
// expected 2xx" (or "206 for Range ..."). 5xx/429/408 are retryable
// (kUnavailable, with the Retry-After delay); 404/410 kNotFound, 401/403
// kPermissionDenied, 416 kOutOfRange, 412 (an If-Match not met: the object
// was replaced) kCorrupt, others kIoError, all final.
// `detail` is the store's reading of the error body (may be empty).
Failure StatusFailure(const Transfer& t, int status, std::string_view status_line,
                      std::string_view range_header, std::string_view detail,
                      std::string_view retry_after);

// A body read that stopped early: `closed` when the server closed the
// connection (a retryable truncation), else a transport error or timeout.
// Only GETs can resume (by range), so for other methods it is final.
AttemptResult BodyFailure(const Transfer& t, const HttpClientOptions& options, bool closed,
                          const boost::system::error_code& ec);

// A body that ended cleanly `missing` bytes short of the requested span: a
// retryable truncation (the retry resumes from the last byte delivered).
AttemptResult ShortBody(const Transfer& t, uint64_t missing);

}  // namespace sluice::http_detail

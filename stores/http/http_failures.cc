#include "stores/http/http_failures.h"

#include <ctime>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include "stores/http/http_text.h"
#include "stores/http/retry_policy.h"

namespace sluice::http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;

bool IsConnectionLoss(const boost::system::error_code& ec) {
  return ec == beast::http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == asio::ssl::error::stream_truncated;
}

Failure TransportFailure(const Transfer& t, const HttpClientOptions& options,
                         std::string_view during, const boost::system::error_code& ec,
                         std::chrono::milliseconds timeout, std::string_view timeout_name) {
  Failure f;
  f.retryable = true;
  if (ec == beast::error::timeout) {
    f.timed_out = true;
    bool overall = Clock::now() + std::chrono::milliseconds(5) >= t.deadline;
    f.status = DeadlineExceededError(
        t.What() + ": " + std::string(during) + ": no data for " +
        (overall ? Ms(options.download_timeout) + " (download_timeout)"
                 : Ms(timeout) + " (" + std::string(timeout_name) + ")"));
  } else {
    f.status = IoError(t.What() + ": " + std::string(during) + ": " + ec.message());
  }
  return f;
}

Failure StatusFailure(const Transfer& t, int status, std::string_view status_line,
                      std::string_view range_header, std::string_view detail,
                      std::string_view retry_after) {
  std::string message = t.What() + ": " + std::string(status_line) +
                        (detail.empty() ? "" : " (" + std::string(detail) + ")") + ", expected " +
                        (range_header.empty() ? "2xx" : "206 for Range " + std::string(range_header));
  Failure f;
  f.http_status = status;
  if (IsRetryableHttpStatus(status)) {
    f.retryable = true;
    f.status = UnavailableError(std::move(message));
    if (!retry_after.empty()) f.retry_after = ParseRetryAfter(retry_after, std::time(nullptr));
    return f;
  }
  StatusCode code = StatusCode::kIoError;
  if (status == 404 || status == 410) code = StatusCode::kNotFound;
  if (status == 401 || status == 403) code = StatusCode::kPermissionDenied;
  if (status == 416) code = StatusCode::kOutOfRange;
  // The object is not the version the request's If-Match named: asking
  // again asks the same of the same object.
  if (status == 412) code = StatusCode::kCorrupt;
  f.status = Status(code, std::move(message));
  return f;
}

AttemptResult BodyFailure(const Transfer& t, const HttpClientOptions& options, bool closed,
                          const boost::system::error_code& ec) {
  std::string during = "reading the body (" + std::to_string(t.delivered) + " bytes";
  if (t.abs_last) during += " of " + std::to_string(*t.abs_last - t.abs_first.value_or(0) + 1);
  during += " received)";
  AttemptResult result;
  if (closed) {
    result.failure.retryable = true;
    result.failure.status = IoError(t.What() + ": " + during +
                                    ": connection closed before the end of the body (truncated)");
  } else {
    result.failure =
        TransportFailure(t, options, during, ec, options.idle_timeout, "idle_timeout");
  }
  if (t.request.method != HttpMethod::kGet) result.outcome = Outcome::kFail;
  return result;
}

AttemptResult ShortBody(const Transfer& t, uint64_t missing) {
  AttemptResult result;
  result.failure.retryable = true;
  result.failure.status = IoError(t.What() + ": body ended " + std::to_string(missing) +
                                  " bytes short of the requested range (truncated)");
  return result;
}

}  // namespace sluice::http_detail

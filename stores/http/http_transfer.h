// The state of one logical HTTP request across its attempts and redirects
// (Transfer), and what one attempt came to (AttemptResult). Shared by the
// client's retry loop (http_client.cc) and one exchange (http_exchange.cc).
//
// Internal to stores/http; a Transfer belongs to one request's coroutine.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "stores/http/http_client.h"
#include "stores/http/host_stats.h"
#include "stores/http/http_text.h"
#include "stores/http/url.h"

namespace sluice::http_detail {

struct Transfer {
  HttpRequest request;
  Url url;                        // the current target (after redirects)
  BodySink* sink = nullptr;       // where the body goes, or
  std::string* buffer = nullptr;  // the buffered body (Send() without a sink)
  Clock::time_point deadline;  // download_timeout
  uint64_t delivered = 0;         // body bytes handed on so far
  uint64_t told_into = 0;  // body_into bytes told to request.on_body_into
  // The absolute byte span being fetched, known after the first response.
  std::optional<uint64_t> abs_first;
  std::optional<uint64_t> abs_last;
  std::string etag;  // of the first response: later ranges ask If-Range
  bool have_response = false;
  HttpResponse response;
  HostStats* host_stats = nullptr;  // the first URL's host (HostStatsFor); never null once sent

  // Tells request.on_body_into (if set) that bytes [0, written) of
  // body_into are in: with `now`, whenever any are new, else once
  // kBodyIntoReportBytes are.
  void TellInto(uint64_t written, bool now) {
    if (!request.on_body_into || written <= told_into) return;
    if (!now && written - told_into < kBodyIntoReportBytes) return;
    told_into = written;
    request.on_body_into(written);
  }

  // "GET https://host/key?REDACTED..." for error text.
  std::string What() const {
    return std::string(HttpMethodName(request.method)) + " " + url.Redacted();
  }
};

// Why an attempt failed and whether another attempt may succeed.
struct Failure {
  Status status;
  bool retryable = false;
  bool timed_out = false;
  std::optional<std::chrono::milliseconds> retry_after;  // the server's Retry-After
  int http_status = 0;  // the response's status when it was a non-2xx answer, else 0
};

enum class Outcome {
  kDone,      // the response is complete (t.response, the body delivered)
  kRetry,     // failed; retry if the policy allows (failure says why)
  kStale,     // a reused connection was closed by the server: go again, uncounted
  kRedirect,  // follow `redirect`
  kFail,      // failed for good
};

struct AttemptResult {
  Outcome outcome = Outcome::kRetry;
  Failure failure;
  Url redirect;

  static AttemptResult Fail(Status status) {
    AttemptResult r;
    r.outcome = Outcome::kFail;
    r.failure.status = std::move(status);
    return r;
  }
};

}  // namespace sluice::http_detail

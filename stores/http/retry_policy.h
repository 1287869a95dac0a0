// The retry policy of HTTP requests: which HTTP statuses and connection
// failures are worth retrying, Retry-After, and HttpRetryPolicy, which
// asks the RetryPolicy (base/retry_policy.h, the owner of "whether and when
// to go again" and of the backoff) about an attempt's failure and words its
// verdict as the client's final error (download_retry, download_timeout).
// No I/O; everything here is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/retry_policy.h"
#include "base/status.h"

namespace sluice {

// 429, 500, 502, 503, 504 (and 408): a later attempt may succeed.
bool IsRetryableHttpStatus(int status);

// A Retry-After value: delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct
// 2015 07:28:00 GMT", relative to `now_unix_seconds`; past dates give 0).
// nullopt for anything else.
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value,
                                                         int64_t now_unix_seconds);

// Mosaic's download_retry and download_timeout with exponential backoff
// and jitter (BackoffDelay).
class HttpRetryPolicy {
 public:
  using Clock = RetryPolicy::Clock;

  // `retries`: retries after the first attempt; `timeout`: bound for one
  // logical request, every attempt and wait included.
  HttpRetryPolicy(int retries, std::chrono::milliseconds timeout, std::chrono::milliseconds base,
                  std::chrono::milliseconds max);

  // The final error when the request's deadline has passed before attempt
  // number `attempts` + 1; OK otherwise. `what` names the request, `last`
  // is the last attempt's failure (may be OK).
  Status CheckDeadline(std::string_view what, int attempts, const Status& last,
                       Clock::time_point deadline) const;

  // After `attempts` attempts, the last of which failed retryably with
  // `last` (the client classified it: http_failures.h), `timed_out`: by a
  // timeout; `retry_after`: the server's wish, which replaces the backoff):
  // the delay before the next attempt, or the final error (retries used
  // up, or the delay would pass `deadline`).
  Result<std::chrono::milliseconds> NextDelay(std::string_view what, int attempts,
                                              const Status& last, bool timed_out,
                                              std::optional<std::chrono::milliseconds> retry_after,
                                              Clock::time_point deadline);

  // Whether a failure to get a connection may heal on retry: not a
  // certificate or configuration problem.
  static bool IsRetryableConnectFailure(const Status& s);

 private:
  std::chrono::milliseconds timeout_;
  RetryPolicy policy_;
};

}  // namespace sluice

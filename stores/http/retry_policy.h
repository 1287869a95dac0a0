// The retry policy of HTTP requests, the one owner of "whether and when to
// go again": which statuses are worth retrying, the backoff delay,
// Retry-After, and RetryPolicy, which turns an attempt's failure into the
// delay before the next attempt or the final error. No I/O; the free
// functions are thread-safe, a RetryPolicy belongs to one client's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// 429, 500, 502, 503, 504 (and 408): a later attempt may succeed.
bool IsRetryableHttpStatus(int status);

// Backoff before retry number `retry` (1-based): base * 2^(retry-1) capped at
// `max`, then a uniform pick in [delay/2, delay] from `random01` in [0, 1).
std::chrono::milliseconds BackoffDelay(int retry, std::chrono::milliseconds base,
                                       std::chrono::milliseconds max, double random01);

// A Retry-After value: delta-seconds ("120") or an HTTP-date ("Wed, 21 Oct
// 2015 07:28:00 GMT", relative to `now_unix_seconds`; past dates give 0).
// nullopt for anything else.
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value,
                                                         int64_t now_unix_seconds);

// Mosaic's download_retry and download_timeout with exponential backoff.
class RetryPolicy {
 public:
  using Clock = std::chrono::steady_clock;

  // `retries`: retries after the first attempt; `timeout`: bound for one
  // logical request, every attempt and wait included.
  RetryPolicy(int retries, std::chrono::milliseconds timeout, std::chrono::milliseconds base,
              std::chrono::milliseconds max);

  // The final error when the request's deadline has passed before attempt
  // number `attempts` + 1; OK otherwise. `what` names the request, `last`
  // is the last attempt's failure (may be OK).
  Status CheckDeadline(std::string_view what, int attempts, const Status& last,
                       Clock::time_point deadline) const;

  // After `attempts` attempts, the last of which failed retryably with
  // `last` (`timed_out`: by a timeout; `retry_after`: the server's wish):
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
  int retries_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds base_;
  std::chrono::milliseconds max_;
  std::mt19937_64 rng_;
};

}  // namespace sluice

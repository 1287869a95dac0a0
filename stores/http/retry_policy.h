// Pieces of the retry policy that need no I/O: which HTTP statuses are worth
// retrying, the backoff delay, and Retry-After parsing. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

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

// "bytes 0-99/1000" -> {0, 99, 1000}; total is nullopt for "*".
struct ContentRange {
  uint64_t first = 0;
  uint64_t last = 0;
  std::optional<uint64_t> total;
};
std::optional<ContentRange> ParseContentRange(std::string_view value);

}  // namespace sluice

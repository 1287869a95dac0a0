#include "stores/http/retry_policy.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "stores/http/http_text.h"

namespace sluice {
using http_detail::ParseDecimal;
using http_detail::TrimOws;

bool IsRetryableHttpStatus(int status) {
  return status == 408 || status == 429 || status == 500 || status == 502 ||
         status == 503 || status == 504;
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value,
                                                         int64_t now_unix_seconds) {
  value = TrimOws(value);
  if (auto seconds = ParseDecimal(value)) {
    return std::chrono::milliseconds(std::min<uint64_t>(*seconds, 86400) * 1000);
  }
  std::string text(value);
  tm parts;
  std::memset(&parts, 0, sizeof(parts));
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  if (end == nullptr || *end != '\0') return std::nullopt;
  int64_t when = timegm(&parts);
  int64_t delta = std::clamp<int64_t>(when - now_unix_seconds, 0, 86400);
  return std::chrono::milliseconds(delta * 1000);
}

using http_detail::Ms;

HttpRetryPolicy::HttpRetryPolicy(int retries, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds base, std::chrono::milliseconds max)
    // Every failure that reaches the policy is retryable: the client
    // classified it (http_failures.h) before asking.
    : timeout_(timeout),
      policy_(RetryOptions{.retries = retries, .backoff_base = base, .backoff_max = max,
                           .jitter = true, .retryable = nullptr}) {}

Status HttpRetryPolicy::CheckDeadline(std::string_view what, int attempts, const Status& last,
                                      Clock::time_point deadline) const {
  if (Clock::now() < deadline) return Status::Ok();
  return DeadlineExceededError(std::string(what) + ": download_timeout of " + Ms(timeout_) +
                               " exceeded after " + std::to_string(attempts) + " attempt(s)" +
                               (last.ok() ? "" : ": " + last.message()));
}

Result<std::chrono::milliseconds> HttpRetryPolicy::NextDelay(
    std::string_view what, int attempts, const Status& last, bool timed_out,
    std::optional<std::chrono::milliseconds> retry_after, Clock::time_point deadline) {
  const RetryDecision decision = policy_.Decide(last, attempts, deadline, retry_after);
  switch (decision.verdict) {
    case RetryDecision::kRetry:
      return decision.delay;
    case RetryDecision::kPastDeadline:
      return DeadlineExceededError(std::string(what) + ": next retry in " + Ms(decision.delay) +
                                   " would pass download_timeout of " + Ms(timeout_) + " (after " +
                                   std::to_string(attempts) + " attempt(s)): " + last.message());
    case RetryDecision::kNoRetriesLeft:
    case RetryDecision::kNotRetryable:
      break;
  }
  StatusCode code = timed_out ? StatusCode::kDeadlineExceeded : StatusCode::kUnavailable;
  return Status(code, std::string(what) + ": gave up after " + std::to_string(attempts) +
                          " attempt(s) (download_retry=" + std::to_string(policy_.options().retries) +
                          "): " + last.message());
}

bool HttpRetryPolicy::IsRetryableConnectFailure(const Status& s) {
  return s.code() != StatusCode::kPermissionDenied && s.code() != StatusCode::kInvalidArgument;
}

}  // namespace sluice

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

std::chrono::milliseconds BackoffDelay(int retry, std::chrono::milliseconds base,
                                       std::chrono::milliseconds max, double random01) {
  int shift = std::clamp(retry - 1, 0, 30);
  int64_t delay = base.count();
  for (int i = 0; i < shift && delay < max.count(); ++i) delay *= 2;
  delay = std::min<int64_t>(delay, max.count());
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(
      delay / 2 + static_cast<int64_t>(static_cast<double>(delay - delay / 2) * random01));
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

RetryPolicy::RetryPolicy(int retries, std::chrono::milliseconds timeout,
                         std::chrono::milliseconds base, std::chrono::milliseconds max)
    : retries_(retries), timeout_(timeout), base_(base), max_(max), rng_(std::random_device{}()) {}

Status RetryPolicy::CheckDeadline(std::string_view what, int attempts, const Status& last,
                                  Clock::time_point deadline) const {
  if (Clock::now() < deadline) return Status::Ok();
  return DeadlineExceededError(std::string(what) + ": download_timeout of " + Ms(timeout_) +
                               " exceeded after " + std::to_string(attempts) + " attempt(s)" +
                               (last.ok() ? "" : ": " + last.message()));
}

Result<std::chrono::milliseconds> RetryPolicy::NextDelay(
    std::string_view what, int attempts, const Status& last, bool timed_out,
    std::optional<std::chrono::milliseconds> retry_after, Clock::time_point deadline) {
  if (attempts > retries_) {
    StatusCode code = timed_out ? StatusCode::kDeadlineExceeded : StatusCode::kUnavailable;
    return Status(code, std::string(what) + ": gave up after " + std::to_string(attempts) +
                            " attempt(s) (download_retry=" + std::to_string(retries_) +
                            "): " + last.message());
  }
  std::chrono::milliseconds delay =
      BackoffDelay(attempts, base_, max_, std::uniform_real_distribution<double>(0, 1)(rng_));
  if (retry_after) delay = *retry_after;
  if (Clock::now() + delay >= deadline) {
    return DeadlineExceededError(std::string(what) + ": next retry in " + Ms(delay) +
                                 " would pass download_timeout of " + Ms(timeout_) + " (after " +
                                 std::to_string(attempts) + " attempt(s)): " + last.message());
  }
  return delay;
}

bool RetryPolicy::IsRetryableConnectFailure(const Status& s) {
  return s.code() != StatusCode::kPermissionDenied && s.code() != StatusCode::kInvalidArgument;
}

}  // namespace sluice

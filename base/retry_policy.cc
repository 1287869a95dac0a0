#include "base/retry_policy.h"

#include <algorithm>

namespace sluice {

std::chrono::milliseconds ExponentialDelay(int retry, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max) {
  const int shift = std::clamp(retry - 1, 0, 30);
  int64_t delay = base.count();
  // Doubling stops once the cap is reached, so it cannot overflow.
  for (int i = 0; i < shift && delay < max.count(); ++i) delay *= 2;
  return std::chrono::milliseconds(std::min<int64_t>(delay, max.count()));
}

std::chrono::milliseconds BackoffDelay(int retry, std::chrono::milliseconds base,
                                       std::chrono::milliseconds max, double random01) {
  const int64_t delay = ExponentialDelay(retry, base, max).count();
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(
      delay / 2 + static_cast<int64_t>(static_cast<double>(delay - delay / 2) * random01));
}

RetryPolicy::RetryPolicy(RetryOptions options)
    : RetryPolicy(options, std::random_device{}()) {}

RetryPolicy::RetryPolicy(RetryOptions options, uint64_t seed) : options_(options), rng_(seed) {}

bool RetryPolicy::IsRetryable(const Status& failure) const {
  return options_.retryable == nullptr || options_.retryable(failure);
}

bool RetryPolicy::RetriesLeft(int attempts) const {
  return options_.retries == RetryOptions::kUnlimitedRetries || attempts <= options_.retries;
}

bool RetryPolicy::ShouldRetry(const Status& failure, int attempts) const {
  return IsRetryable(failure) && RetriesLeft(attempts);
}

std::chrono::milliseconds RetryPolicy::Backoff(int retry) {
  if (!options_.jitter) return ExponentialDelay(retry, options_.backoff_base, options_.backoff_max);
  double random01;
  {
    std::lock_guard<std::mutex> lock(rng_mu_);
    random01 = std::uniform_real_distribution<double>(0, 1)(rng_);
  }
  return BackoffDelay(retry, options_.backoff_base, options_.backoff_max, random01);
}

RetryDecision RetryPolicy::Decide(const Status& failure, int attempts, Clock::time_point deadline,
                                  std::optional<std::chrono::milliseconds> server_delay) {
  if (!IsRetryable(failure)) return {RetryDecision::kNotRetryable, {}};
  if (!RetriesLeft(attempts)) return {RetryDecision::kNoRetriesLeft, {}};
  const std::chrono::milliseconds delay = server_delay ? *server_delay : Backoff(attempts);
  if (deadline != Clock::time_point::max() && Clock::now() + delay >= deadline) {
    return {RetryDecision::kPastDeadline, delay};
  }
  return {RetryDecision::kRetry, delay};
}

}  // namespace sluice

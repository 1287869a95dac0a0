// The retry policy: the one owner of "whether and when to go again" for
// every retry loop in Sluice (an HTTP request's attempts, a shard's
// downloads, a credential's refreshes). Given the failure of an attempt it
// says whether another may succeed (the failure's kind, the attempts left),
// how long to wait first (exponential backoff, with jitter so that many
// clients failing together do not come back together) and whether that
// wait still fits the caller's deadline. It decides; it never sleeps or
// does I/O: each loop waits as its thread or event loop does, and words its
// own error (which option ran out, which object failed).
//
// Thread safety: every member may be called from several threads at once
// (the jitter's random generator is guarded). Fork: a policy seeds its
// generator when constructed, so one built in a forked child does not
// repeat its parent's jitter.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <random>

#include "base/status.h"

namespace sluice {

struct RetryOptions {
  // Retries after the first attempt (1 + retries attempts in all);
  // kUnlimitedRetries: attempts until the caller stops.
  static constexpr int kUnlimitedRetries = std::numeric_limits<int>::max();
  int retries = 0;
  // The wait before retry n (1-based): backoff_base * 2^(n-1), capped at
  // backoff_max; 0 for both: go again at once.
  std::chrono::milliseconds backoff_base{0};
  std::chrono::milliseconds backoff_max{0};
  // True: the wait is a uniform pick in [wait/2, wait]; false: exactly it.
  bool jitter = true;
  // Which failures another attempt may heal; null: every failure.
  bool (*retryable)(const Status& failure) = nullptr;
};

// The exponential part of the backoff before retry number `retry`
// (1-based; below 1 counts as 1): base * 2^(retry-1), capped at `max`.
std::chrono::milliseconds ExponentialDelay(int retry, std::chrono::milliseconds base,
                                           std::chrono::milliseconds max);

// ExponentialDelay with jitter: a uniform pick in [delay/2, delay] from
// `random01` in [0, 1) (clamped to [0, 1]).
std::chrono::milliseconds BackoffDelay(int retry, std::chrono::milliseconds base,
                                       std::chrono::milliseconds max, double random01);

// What to do after a failed attempt.
struct RetryDecision {
  enum Verdict {
    kRetry,           // wait `delay`, then attempt again
    kNotRetryable,    // the failure is final (RetryOptions::retryable)
    kNoRetriesLeft,   // `retries` retries done
    kPastDeadline,    // waiting `delay` would reach the deadline
  };
  Verdict verdict = kRetry;
  // The wait before the next attempt (for kPastDeadline: the wait that
  // would have been; 0 otherwise).
  std::chrono::milliseconds delay{0};
};

class RetryPolicy {
 public:
  using Clock = std::chrono::steady_clock;

  explicit RetryPolicy(RetryOptions options);
  // With a fixed seed for the jitter (tests).
  RetryPolicy(RetryOptions options, uint64_t seed);

  const RetryOptions& options() const { return options_; }

  // Whether another attempt may heal `failure` (RetryOptions::retryable).
  bool IsRetryable(const Status& failure) const;
  // Whether a retry is left after `attempts` attempts (1-based count).
  bool RetriesLeft(int attempts) const;
  // Both: attempt number `attempts` failed with `failure`; go again?
  bool ShouldRetry(const Status& failure, int attempts) const;

  // The wait before retry number `retry` (1-based), jittered as the options say.
  std::chrono::milliseconds Backoff(int retry);

  // After attempt number `attempts` failed with `failure`: retry (and after
  // which wait), or why not. `server_delay` (a server's Retry-After, say)
  // replaces the backoff when set. `deadline`: the time by which the next
  // attempt must start (Clock::time_point::max(): none); a wait that would
  // reach it is kPastDeadline. Checked in this order: retryable, retries
  // left, deadline.
  RetryDecision Decide(const Status& failure, int attempts,
                       Clock::time_point deadline = Clock::time_point::max(),
                       std::optional<std::chrono::milliseconds> server_delay = std::nullopt);

 private:
  RetryOptions options_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

}  // namespace sluice

// The retry policy every retry loop asks: which failures it retries, how
// many attempts, the backoff's bounds (exponential, capped, jittered) and
// the deadline.
#include "base/retry_policy.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::milliseconds;
using Clock = RetryPolicy::Clock;

bool OnlyUnavailable(const Status& s) { return s.code() == StatusCode::kUnavailable; }

TEST(RetryPolicyTest, RetriesWhatItsPredicateCallsRetryable) {
  RetryPolicy only(RetryOptions{.retries = 3, .retryable = OnlyUnavailable});
  EXPECT_TRUE(only.ShouldRetry(UnavailableError("503"), 1));
  EXPECT_FALSE(only.ShouldRetry(NotFoundError("gone"), 1));
  EXPECT_FALSE(only.ShouldRetry(CorruptError("bits"), 1));
  EXPECT_EQ(only.Decide(NotFoundError("gone"), 1).verdict, RetryDecision::kNotRetryable);

  RetryPolicy any(RetryOptions{.retries = 3});  // no predicate: every failure
  for (StatusCode code : {StatusCode::kNotFound, StatusCode::kCorrupt, StatusCode::kIoError,
                          StatusCode::kPermissionDenied}) {
    EXPECT_TRUE(any.ShouldRetry(Status(code, "x"), 1)) << StatusCodeName(code);
  }
}

TEST(RetryPolicyTest, AttemptsAreLimitedToOnePlusRetries) {
  RetryPolicy two(RetryOptions{.retries = 2});
  EXPECT_TRUE(two.ShouldRetry(IoError("x"), 1));
  EXPECT_TRUE(two.ShouldRetry(IoError("x"), 2));
  EXPECT_FALSE(two.ShouldRetry(IoError("x"), 3));  // three attempts made: done
  EXPECT_EQ(two.Decide(IoError("x"), 2).verdict, RetryDecision::kRetry);
  EXPECT_EQ(two.Decide(IoError("x"), 3).verdict, RetryDecision::kNoRetriesLeft);

  RetryPolicy none(RetryOptions{.retries = 0});
  EXPECT_FALSE(none.ShouldRetry(IoError("x"), 1));
  EXPECT_EQ(none.Decide(IoError("x"), 1).verdict, RetryDecision::kNoRetriesLeft);

  RetryPolicy unlimited(RetryOptions{.retries = RetryOptions::kUnlimitedRetries});
  EXPECT_TRUE(unlimited.ShouldRetry(IoError("x"), 1));
  EXPECT_TRUE(unlimited.ShouldRetry(IoError("x"), 1 << 30));
}

TEST(RetryPolicyTest, NotRetryableIsDecidedBeforeRetriesLeft) {
  RetryPolicy p(RetryOptions{.retries = 0, .retryable = OnlyUnavailable});
  EXPECT_EQ(p.Decide(NotFoundError("x"), 5).verdict, RetryDecision::kNotRetryable);
  EXPECT_EQ(p.Decide(UnavailableError("x"), 5).verdict, RetryDecision::kNoRetriesLeft);
}

TEST(RetryPolicyTest, ExponentialDelayDoublesUpToItsCap) {
  EXPECT_EQ(ExponentialDelay(1, milliseconds(100), milliseconds(1000)), milliseconds(100));
  EXPECT_EQ(ExponentialDelay(2, milliseconds(100), milliseconds(1000)), milliseconds(200));
  EXPECT_EQ(ExponentialDelay(4, milliseconds(100), milliseconds(1000)), milliseconds(800));
  EXPECT_EQ(ExponentialDelay(5, milliseconds(100), milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(ExponentialDelay(1000000, milliseconds(100), milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(ExponentialDelay(0, milliseconds(100), milliseconds(1000)), milliseconds(100));
  EXPECT_EQ(ExponentialDelay(3, milliseconds(0), milliseconds(0)), milliseconds(0));
  // A cap far above what 30 doublings reach: no overflow.
  EXPECT_EQ(ExponentialDelay(100, milliseconds(1), milliseconds(int64_t{1} << 40)),
            milliseconds(int64_t{1} << 30));
}

TEST(RetryPolicyTest, JitterPicksWithinHalfToAllOfTheDelay) {
  EXPECT_EQ(BackoffDelay(2, milliseconds(100), milliseconds(1000), 0.0), milliseconds(100));
  EXPECT_EQ(BackoffDelay(2, milliseconds(100), milliseconds(1000), 1.0), milliseconds(200));
  EXPECT_EQ(BackoffDelay(2, milliseconds(100), milliseconds(1000), 7.0), milliseconds(200));
  EXPECT_EQ(BackoffDelay(2, milliseconds(100), milliseconds(1000), -1.0), milliseconds(100));

  RetryPolicy p(RetryOptions{.retries = 10, .backoff_base = milliseconds(100),
                             .backoff_max = milliseconds(1000), .jitter = true},
                /*seed=*/42);
  std::vector<int64_t> seen;
  for (int i = 0; i < 200; ++i) {
    const int retry = 1 + i % 6;  // 100, 200, 400, 800, 1000, 1000 ms before jitter
    const int64_t full = ExponentialDelay(retry, milliseconds(100), milliseconds(1000)).count();
    const int64_t d = p.Backoff(retry).count();
    EXPECT_GE(d, full / 2) << retry;
    EXPECT_LE(d, full) << retry;
    if (retry == 4) seen.push_back(d);
  }
  // Jittered: not every wait before the fourth retry is the same.
  EXPECT_NE(*std::min_element(seen.begin(), seen.end()), *std::max_element(seen.begin(), seen.end()));
}

TEST(RetryPolicyTest, WithoutJitterTheWaitIsExact) {
  RetryPolicy p(RetryOptions{.retries = RetryOptions::kUnlimitedRetries,
                             .backoff_base = std::chrono::seconds(1),
                             .backoff_max = std::chrono::seconds(60), .jitter = false});
  const int64_t want[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000};
  for (int retry = 1; retry <= 8; ++retry) {
    EXPECT_EQ(p.Backoff(retry).count(), want[retry - 1]) << retry;
    RetryDecision d = p.Decide(IoError("x"), retry);
    EXPECT_EQ(d.verdict, RetryDecision::kRetry);
    EXPECT_EQ(d.delay.count(), want[retry - 1]) << retry;
  }
}

TEST(RetryPolicyTest, AWaitThatWouldReachTheDeadlineIsPastIt) {
  RetryPolicy p(RetryOptions{.retries = 5, .backoff_base = milliseconds(2000),
                             .backoff_max = milliseconds(2000), .jitter = false});
  RetryDecision late = p.Decide(IoError("x"), 1, Clock::now() + milliseconds(500));
  EXPECT_EQ(late.verdict, RetryDecision::kPastDeadline);
  EXPECT_EQ(late.delay, milliseconds(2000));
  RetryDecision in_time = p.Decide(IoError("x"), 1, Clock::now() + std::chrono::hours(1));
  EXPECT_EQ(in_time.verdict, RetryDecision::kRetry);
  EXPECT_EQ(in_time.delay, milliseconds(2000));
  // No deadline: any wait fits.
  EXPECT_EQ(p.Decide(IoError("x"), 1).verdict, RetryDecision::kRetry);
  // Retries are counted before the deadline is looked at.
  EXPECT_EQ(p.Decide(IoError("x"), 6, Clock::now()).verdict, RetryDecision::kNoRetriesLeft);
}

TEST(RetryPolicyTest, AServersDelayReplacesTheBackoff) {
  RetryPolicy p(RetryOptions{.retries = 5, .backoff_base = milliseconds(100),
                             .backoff_max = milliseconds(100), .jitter = false});
  RetryDecision d = p.Decide(UnavailableError("429"), 1, Clock::time_point::max(),
                             milliseconds(7000));
  EXPECT_EQ(d.verdict, RetryDecision::kRetry);
  EXPECT_EQ(d.delay, milliseconds(7000));
  RetryDecision late = p.Decide(UnavailableError("429"), 1, Clock::now() + milliseconds(6000),
                                milliseconds(7000));
  EXPECT_EQ(late.verdict, RetryDecision::kPastDeadline);
  EXPECT_EQ(late.delay, milliseconds(7000));
}

// Many threads may ask one policy at once (run under TSan in CI).
TEST(RetryPolicyTest, OnePolicyServesManyThreads) {
  RetryPolicy p(RetryOptions{.retries = 3, .backoff_base = milliseconds(10),
                             .backoff_max = milliseconds(80), .jitter = true});
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        RetryDecision d = p.Decide(IoError("x"), 1 + i % 3);
        if (d.verdict != RetryDecision::kRetry || d.delay < milliseconds(5) ||
            d.delay > milliseconds(40)) {
          ++bad[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace sluice

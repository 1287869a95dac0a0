// The retry policy's pure parts: which statuses retry, backoff, Retry-After.
#include "stores/http/retry_policy.h"

#include <chrono>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(RetryPolicyTest, RetryableStatuses) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableHttpStatus(s)) << s;
  for (int s : {200, 206, 301, 400, 401, 403, 404, 416, 501}) EXPECT_FALSE(IsRetryableHttpStatus(s)) << s;
}

TEST(RetryPolicyTest, BackoffDoublesWithJitterAndCap) {
  using std::chrono::milliseconds;
  EXPECT_EQ(BackoffDelay(1, milliseconds(100), milliseconds(10000), 0.0), milliseconds(50));
  EXPECT_EQ(BackoffDelay(1, milliseconds(100), milliseconds(10000), 0.999999), milliseconds(99));
  EXPECT_EQ(BackoffDelay(3, milliseconds(100), milliseconds(10000), 0.0), milliseconds(200));
  EXPECT_EQ(BackoffDelay(3, milliseconds(100), milliseconds(10000), 0.5), milliseconds(300));
  EXPECT_EQ(BackoffDelay(40, milliseconds(100), milliseconds(1000), 0.0), milliseconds(500));
}

TEST(RetryPolicyTest, ParsesRetryAfter) {
  using std::chrono::milliseconds;
  EXPECT_EQ(ParseRetryAfter("3", 0), milliseconds(3000));
  EXPECT_EQ(ParseRetryAfter(" 0 ", 0), milliseconds(0));
  // 1445412480 = Wed, 21 Oct 2015 07:28:00 GMT.
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 7), milliseconds(7000));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 50), milliseconds(0));
  EXPECT_FALSE(ParseRetryAfter("soon", 0).has_value());
  EXPECT_FALSE(ParseRetryAfter("-1", 0).has_value());
}

}  // namespace
}  // namespace sluice

#include "stores/http/first_byte_time.h"

#include <gtest/gtest.h>

namespace sluice::http_detail {
namespace {

using namespace std::chrono_literals;

TEST(FirstByteTimeTest, NothingIsBelowAnyLimitBeforeTheFirstAnswer) {
  FirstByteTime t;
  EXPECT_EQ(t.micros(), -1);
  EXPECT_FALSE(t.Below(1h));
}

TEST(FirstByteTimeTest, TheFastestAnswerCounts) {
  FirstByteTime t;
  t.Record(15ms);  // S3's time to first byte
  EXPECT_EQ(t.micros(), 15000);
  EXPECT_FALSE(t.Below(2ms));
  EXPECT_TRUE(t.Below(15001us));
  EXPECT_FALSE(t.Below(15000us));
  t.Record(800us);
  EXPECT_EQ(t.micros(), 800);
  EXPECT_TRUE(t.Below(2ms));
  // Slower answers later (a loaded host) change nothing.
  t.Record(7ms);
  t.Record(801us);
  EXPECT_EQ(t.micros(), 800);
  EXPECT_TRUE(t.Below(2ms));
}

TEST(FirstByteTimeTest, ANegativeDurationCountsAsZero) {
  FirstByteTime t;
  t.Record(-5us);
  EXPECT_EQ(t.micros(), 0);
  EXPECT_TRUE(t.Below(1us));
  EXPECT_FALSE(t.Below(0us));
}

}  // namespace
}  // namespace sluice::http_detail

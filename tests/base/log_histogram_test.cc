// Fixed logarithmic buckets: where values fall, and the quantiles read back.
#include "base/log_histogram.h"

#include <cmath>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(LogHistogram, TwoBucketsPerPowerOfTwo) {
  EXPECT_EQ(LogHistogram::BucketOf(0), 0);
  EXPECT_EQ(LogHistogram::BucketOf(1), 1);  // [1, 1.41)
  EXPECT_EQ(LogHistogram::BucketOf(2), 3);  // [2, 2.83)
  EXPECT_EQ(LogHistogram::BucketOf(3), 4);  // [2.83, 4)
  EXPECT_EQ(LogHistogram::BucketOf(4), 5);
  EXPECT_EQ(LogHistogram::BucketOf(1023), 20);  // [724, 1024)
  EXPECT_EQ(LogHistogram::BucketOf(1024), 21);  // [1024, 1448)
  EXPECT_EQ(LogHistogram::BucketOf(1448), 21);
  EXPECT_EQ(LogHistogram::BucketOf(1449), 22);
  // The last bucket takes everything from 2^31 us on.
  EXPECT_EQ(LogHistogram::BucketOf(uint64_t{1} << 31), 63);  // about 36 minutes: the last
  EXPECT_EQ(LogHistogram::BucketOf(uint64_t{1} << 40), LogHistogram::kBuckets - 1);
  EXPECT_EQ(LogHistogram::BucketOf(UINT64_MAX), LogHistogram::kBuckets - 1);
}

TEST(LogHistogram, QuantilesAreTheirBucketsGeometricMiddle) {
  LogHistogram h;
  for (int i = 0; i < 90; ++i) h.Record(std::chrono::microseconds(1000));  // bucket 20
  for (int i = 0; i < 10; ++i) h.Record(std::chrono::milliseconds(100));   // bucket 34
  LogHistogram::Counts c = h.Snapshot();
  EXPECT_EQ(c.count(), 100u);
  EXPECT_DOUBLE_EQ(c.QuantileMicros(0.5), std::exp2(39.0 / 4));   // ~861 us
  EXPECT_DOUBLE_EQ(c.QuantileMicros(0.90), std::exp2(39.0 / 4));
  EXPECT_DOUBLE_EQ(c.QuantileMicros(0.91), std::exp2(67.0 / 4));  // ~110 ms
  EXPECT_DOUBLE_EQ(LogHistogram::Counts().QuantileMicros(0.5), 0);
}

TEST(LogHistogram, AWindowIsTheDifferenceOfTwoSnapshots) {
  LogHistogram h;
  h.Record(std::chrono::microseconds(5));
  LogHistogram::Counts before = h.Snapshot();
  h.Record(std::chrono::microseconds(5));
  h.Record(std::chrono::microseconds(-3));  // counts as zero
  LogHistogram::Counts window = h.Snapshot().Since(before);
  EXPECT_EQ(window.count(), 2u);
  EXPECT_EQ(window.buckets[0], 1u);
  EXPECT_EQ(window.buckets[LogHistogram::BucketOf(5)], 1u);
  before.Add(window);
  EXPECT_EQ(before.count(), 3u);
}

}  // namespace
}  // namespace sluice

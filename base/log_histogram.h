// A histogram of durations in fixed logarithmic buckets, cheap enough to
// record into on every request from any thread (one relaxed atomic add),
// and small enough to copy whole for a report (kBuckets counts).
//
// Bucket b (b >= 1) holds values in [2^((b-1)/2), 2^(b/2)) microseconds,
// two buckets per power of two; bucket 0 holds values under 1 us and the last
// bucket everything from about 36 minutes on. A quantile is answered with
// its bucket's geometric middle, so it is within a factor of 2^(1/4) (19%)
// of a recorded value: enough to tell 50 ms from 500 ms, which is what a
// report of time to first byte or transfer time is for.
//
// Thread safety: Record and Snapshot from any thread; a snapshot taken while
// others record is a consistent-enough copy (each bucket read once).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice {

class LogHistogram {
 public:
  static constexpr int kBuckets = 64;

  struct Counts {
    std::array<uint64_t, kBuckets> buckets{};
    uint64_t count() const;
    // The q-quantile (0 <= q <= 1) in microseconds, as its bucket's
    // geometric middle; 0 when empty.
    double QuantileMicros(double q) const;
    // Adds `other` bucket by bucket (a sum over hosts or processes).
    void Add(const Counts& other);
    // This minus an earlier snapshot of the same histogram (a window).
    Counts Since(const Counts& earlier) const;
  };

  // The bucket a duration of `micros` falls in.
  static int BucketOf(uint64_t micros);

  void Record(std::chrono::microseconds took) {
    const int64_t us = took.count();
    buckets_[BucketOf(us < 0 ? 0 : static_cast<uint64_t>(us))].fetch_add(
        1, std::memory_order_relaxed);
  }
  Counts Snapshot() const;

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
};

}  // namespace sluice

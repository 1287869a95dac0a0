#include "base/log_histogram.h"

#include <bit>
#include <cmath>

namespace sluice {

int LogHistogram::BucketOf(uint64_t micros) {
  if (micros == 0) return 0;
  // floor(2 * log2(micros)) + 1: the power of two, then which half of it
  // (above or below 2^(k + 1/2), compared as micros^2 against 2^(2k+1)).
  const int k = std::bit_width(micros) - 1;
  int half = 0;
  if (k < 31) {
    half = micros * micros >= (uint64_t{1} << (2 * k + 1)) ? 1 : 0;
  } else {
    half = static_cast<double>(micros) >= std::ldexp(std::sqrt(2.0), k) ? 1 : 0;
  }
  const int b = 2 * k + half + 1;
  return b < kBuckets ? b : kBuckets - 1;
}

LogHistogram::Counts LogHistogram::Snapshot() const {
  Counts c;
  for (int b = 0; b < kBuckets; ++b) c.buckets[b] = buckets_[b].load(std::memory_order_relaxed);
  return c;
}

uint64_t LogHistogram::Counts::count() const {
  uint64_t n = 0;
  for (uint64_t v : buckets) n += v;
  return n;
}

double LogHistogram::Counts::QuantileMicros(double q) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  q = q < 0 ? 0 : (q > 1 ? 1 : q);
  // The smallest bucket whose running count reaches ceil(q * n) (at least 1).
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(n)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets[b];
    if (seen >= rank) {
      if (b == 0) return 0.5;
      // [2^((b-1)/2), 2^(b/2)): geometric middle 2^((2b-1)/4).
      return std::exp2((2.0 * b - 1.0) / 4.0);
    }
  }
  return std::exp2((2.0 * kBuckets - 1.0) / 4.0);
}

void LogHistogram::Counts::Add(const Counts& other) {
  for (int b = 0; b < kBuckets; ++b) buckets[b] += other.buckets[b];
}

LogHistogram::Counts LogHistogram::Counts::Since(const Counts& earlier) const {
  Counts c;
  for (int b = 0; b < kBuckets; ++b) {
    c.buckets[b] = buckets[b] >= earlier.buckets[b] ? buckets[b] - earlier.buckets[b] : 0;
  }
  return c;
}

}  // namespace sluice

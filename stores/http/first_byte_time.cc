#include "stores/http/first_byte_time.h"

#include <algorithm>

namespace sluice::http_detail {

void FirstByteTime::Record(std::chrono::microseconds took) {
  const int64_t us = std::max<int64_t>(took.count(), 0);
  const int64_t was = fastest_us_.load(std::memory_order_relaxed);
  if (was < 0 || us < was) fastest_us_.store(us, std::memory_order_relaxed);
}

bool FirstByteTime::Below(std::chrono::microseconds limit) const {
  const int64_t us = micros();
  return us >= 0 && us < limit.count();
}

}  // namespace sluice::http_detail

// The fastest time to first byte (request sent -> response head read) the
// client's servers have shown, which tells a link with a round trip to hide
// (a remote store: a round trip plus its own work, 10 ms and more for S3)
// from one without (a server on this host or next to it: its own work
// alone, well under a millisecond for nginx, 1-4 ms for s3rver; see
// HttpClientOptions::local_first_byte). GetToFile keeps fewer parts in
// flight on the latter (GetToFileOptions::local_concurrency): there
// parallel connections add no bandwidth, only CPU and socket memory.
//
// The fastest, not an average: a busy client (its loop receiving other
// bodies) or server only adds to a response's time, so slow answers say
// little about the link and fast ones say what it is.
//
// Internal to stores/http. Record runs on the client's executor; Below may
// be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice::http_detail {

class FirstByteTime {
 public:
  // Adds one response's time to first byte (negative counts as zero).
  void Record(std::chrono::microseconds took);

  // Whether some response came in less than `limit`.
  bool Below(std::chrono::microseconds limit) const;

  // The fastest in microseconds; -1 before the first response.
  int64_t micros() const { return fastest_us_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> fastest_us_{-1};
};

}  // namespace sluice::http_detail

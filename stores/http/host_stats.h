// What this process's HTTP clients did, per store host: requests, retries,
// throttling, errors by kind, bytes, and time to first byte and transfer
// time histograms. The one place these are counted (HttpClient's retry loop
// and its exchanges); the engine reads them (HostStatsSnapshot) to report
// and diagnose downloads, never counts them again.
//
// Process-wide, not per client: a dataset's stores open and close clients
// (one per store, a forked child its own), and a user looks at a host. A
// host's entry lives until the process ends (entries are never removed, so
// a pointer from ForHost stays valid; a process talks to few hosts).
//
// Thread safety: everything, from any thread; counters are relaxed atomics
// (one add per request or attempt, nothing per byte).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/log_histogram.h"

namespace sluice {

// Why an attempt failed, as counted (HostStats::errors).
enum class HttpErrorKind : int {
  kTimeout = 0,     // connect, first byte, idle or download_timeout
  kConnection,      // refused, reset, closed early, TLS
  kThrottled,       // 429 or 503 (also counted in throttles_429/503)
  kServer,          // other 5xx, 408
  kClient,          // 4xx other than 408/429 (not found, denied, ...)
  kOther,
  kCount
};
const char* HttpErrorKindName(HttpErrorKind kind);  // "timeout", ...; static storage

struct HostStats {
  std::atomic<uint64_t> requests{0};   // logical requests begun (Send, each GetToFile part)
  std::atomic<uint64_t> attempts{0};   // exchanges sent (retries included, stale reuse not)
  std::atomic<uint64_t> retries{0};    // attempts after a failed one
  std::atomic<uint64_t> failed{0};     // requests that ended in an error
  std::atomic<uint64_t> throttles_429{0};
  std::atomic<uint64_t> throttles_503{0};
  // Failed attempts by kind.
  std::array<std::atomic<uint64_t>, static_cast<int>(HttpErrorKind::kCount)> errors{};
  std::atomic<uint64_t> bytes{0};      // response body bytes delivered
  std::atomic<int64_t> in_flight{0};   // requests begun and not ended
  // Summed durations of ended requests: over a period, busy / its length is
  // the mean number of requests in flight.
  std::atomic<uint64_t> busy_us{0};
  LogHistogram first_byte;             // 2xx responses without a request body: sent -> head
  LogHistogram transfer;               // successful requests: begun -> body delivered

  void CountError(HttpErrorKind kind) {
    errors[static_cast<int>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
};

// A copy of one host's counters.
struct HostStatsSnapshot {
  std::string host;  // "https://bucket.s3.amazonaws.com:443" (Url::PoolKey)
  uint64_t requests = 0, attempts = 0, retries = 0, failed = 0;
  uint64_t throttles_429 = 0, throttles_503 = 0;
  std::array<uint64_t, static_cast<int>(HttpErrorKind::kCount)> errors{};
  uint64_t bytes = 0;
  int64_t in_flight = 0;
  uint64_t busy_us = 0;
  LogHistogram::Counts first_byte, transfer;
};

// The entry of `host` (a pool key: scheme, host, port), created on first use.
HostStats* HostStatsFor(const std::string& host);
// Every host's counters so far, sorted by host.
std::vector<HostStatsSnapshot> SnapshotHostStats();

}  // namespace sluice

#include "engine/dataset/diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace sluice {
namespace {

// "95", "9.5": one decimal below 10.
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.1f" : "%.0f", v);
  return buf;
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
  return buf;
}

// The store side of a download-bound window: requests in flight (on
// average), time to first byte, throttling and retries, over every host.
struct StoreSide {
  bool any = false;
  double in_flight = 0;
  double first_byte_p95_ms = 0;
  uint64_t throttled = 0, retries = 0;
};

StoreSide SumHosts(const DatasetMetrics& w) {
  StoreSide s;
  LogHistogram::Counts first_byte;
  uint64_t busy_us = 0;
  for (const HostStatsSnapshot& h : w.hosts) {
    if (h.requests == 0) continue;
    s.any = true;
    busy_us += h.busy_us;
    s.throttled += h.throttles_429 + h.throttles_503;
    s.retries += h.retries;
    first_byte.Add(h.first_byte);
  }
  if (w.seconds > 0) s.in_flight = static_cast<double>(busy_us) / 1e6 / w.seconds;
  s.first_byte_p95_ms = first_byte.QuantileMicros(0.95) / 1000;
  return s;
}

}  // namespace

std::string Diagnose(const DatasetMetrics& w) {
  const ConsumerWaits& c = w.waits;
  if (w.samples == 0 && c.total_ns == 0) return "no samples read yet";
  const double seconds = w.seconds > 0 ? w.seconds : 1e-9;
  // Per reading process: a job's workers wait side by side.
  const double waited = static_cast<double>(c.total_ns) / 1e9 / seconds /
                        static_cast<double>(std::max<uint64_t>(w.readers, 1));
  const double mb_per_s = static_cast<double>(w.bytes_downloaded) / 1e6 / seconds;
  if (waited < kDataBoundFraction) {
    return "not data-bound: waited " + Percent(waited) + " of the time for data (" +
           Number(static_cast<double>(w.samples) / seconds) + " samples/s, " +
           Number(static_cast<double>(w.bytes) / 1e6 / seconds) + " MB/s delivered)";
  }
  const std::string head = "waited " + Percent(waited) + " of the time ";
  // The largest cause; ties go to the earlier one in this order.
  const uint64_t causes[] = {c.download_ns, c.peer_download_ns, c.cache_room_ns, c.decode_ns,
                             c.other_ns};
  int top = 0;
  for (int k = 1; k < 5; ++k) {
    if (causes[k] > causes[top]) top = k;
  }
  switch (top) {
    case 0: {
      std::string text = head + "on downloads" +
                         (w.remote.empty() ? std::string() : " from " + w.remote) + ": ";
      const StoreSide store = SumHosts(w);
      if (store.any) {
        text += Number(store.in_flight) + " requests in flight, ";
      }
      text += Number(mb_per_s) + " MB/s";
      if (store.any) {
        text += ", time to first byte p95 " + Number(store.first_byte_p95_ms) + " ms";
      }
      if (store.throttled > 0) {
        return text + "; the store throttled " + std::to_string(store.throttled) +
               " requests (429/503) and " + std::to_string(store.retries) +
               " were retried: lower fetch_concurrency or spread the data over more prefixes";
      }
      return text + "; raise fetch_concurrency or predownload";
    }
    case 1:
      return head + "for shards other processes of this node were downloading (" +
             Number(mb_per_s) + " MB/s downloaded here); raise predownload so that they start " +
             "sooner, or fetch_concurrency";
    case 2:
      return head + "for room in the cache (cache_limit " +
             Number(static_cast<double>(w.cache_limit) / 1e6) + " MB, " +
             Number(static_cast<double>(w.cache_bytes_on_disk) / 1e6) +
             " MB on disk); raise cache_limit";
    case 3:
      return head + "opening shards (decompression, hash checks, mapping); raise predownload " +
             "so that they open ahead, or drop validate_hash";
    default:
      return head + "for the prefetcher to reach the next shard; raise predownload or " +
             "fetch_concurrency";
  }
}

}  // namespace sluice

// A dataset's counters at one moment (StreamingDataset::Metrics): what its
// consumer got and waited for and why (consumer_waits.h), what its streams
// downloaded, hit and evicted in the node's cache, and what this process's
// HTTP clients saw per store host (stores/http/host_stats.h, process-wide).
// MetricsSince turns two snapshots into a window; MetricsJson is the one
// rendering every binding shows (bindings/c sluice_stream_metrics_json,
// Python's StreamingDataset.metrics(); fields documented in
// docs/metrics.rst).
//
// Plain values; thread-safe functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/dataset/consumer_waits.h"
#include "engine/dataset/lead_minima.h"
#include "stores/http/host_stats.h"

namespace sluice {

struct DatasetMetrics {
  double seconds = 0;  // since the dataset was opened (a window: its length)
  // The consumer (NextBatch and Get calls of this process).
  uint64_t samples = 0;  // handed out
  uint64_t bytes = 0;    // their stored bytes
  uint64_t batches = 0;  // NextBatch calls that returned samples
  ConsumerWaits waits;
  // The prefetch lead when the last batch returned (gauges): samples ready
  // past it, and shards the prefetcher held open for it and beyond.
  uint64_t prefetch_lead_samples = 0;
  uint64_t prefetch_lead_shards = 0;
  // Each batch's lead added up (a mean over a period: sum / batches), and
  // the least of the period's batches (0: none; process scope only, set by
  // the dataset: MetricsSince keeps `later`'s).
  uint64_t lead_samples_sum = 0, lead_shards_sum = 0;
  uint64_t lead_samples_min = 0, lead_shards_min = 0;
  // A node record's (node_metrics.h): the least leads of the batches after
  // each of the process's records, for the job's and node's windows.
  LeadMinima lead_samples_steps, lead_shards_steps;
  // The streams' fetches (this process).
  uint64_t downloads = 0;        // objects fetched from remotes
  uint64_t download_errors = 0;  // fetches that failed (then retried or given up)
  uint64_t download_ns = 0;      // time in successful fetches
  uint64_t bytes_downloaded = 0;
  uint64_t shards_downloaded = 0;  // cache entries this process fetched
  uint64_t cache_hits = 0;
  uint64_t shards_evicted = 0;
  // The prefetch threads' waits in the cache (all opens, not only those the
  // consumer waited for).
  uint64_t cache_peer_fetch_wait_ns = 0;
  uint64_t cache_room_wait_ns = 0;
  uint64_t cache_bytes_on_disk = 0;  // gauge: node-wide, summed over the streams' caches
  uint64_t cache_limit = 0;          // configured, 0 = none
  uint64_t shards_skipped = 0, samples_skipped = 0;
  int64_t fetch_concurrency = 0;  // shards opened at once per reader (configured or derived)
  std::string remote;             // the first stream's remote as described ("" = none)
  std::vector<HostStatsSnapshot> hosts;  // process-wide, by host
  // Summed over `hosts` (in a node's sum: over the processes' records).
  uint64_t http_requests = 0, http_retries = 0, http_throttles = 0;
  uint64_t processes = 1;  // the processes (records) summed: 1 for one process's view
  // A window's processes that read in it (a job's or node's: the records
  // whose batches grew, NodeLeadWindow): its waits are theirs, each up to
  // the window's length, so the share of time waited is per reader.
  uint64_t readers = 1;
};

// Every count of DatasetMetrics: the fields that add up over periods and
// over processes (not gauges, settings, mins or hosts), in one fixed order
// (node_metrics.cc stores them in it). The one list: MetricsSince and the
// node's sums go through it.
using CountField = uint64_t& (*)(DatasetMetrics&);
std::span<const CountField> CountFields();
inline uint64_t CountOf(CountField f, const DatasetMetrics& m) {
  return f(const_cast<DatasetMetrics&>(m));
}

// Sets m's http_requests, http_retries and http_throttles to the sums over
// m->hosts (requests, retries, 429s and 503s).
void SetHttpTotals(DatasetMetrics* m);

// Whose counts a view sums (docs/metrics.rst, node_metrics.h): this
// process's; the job's, this dataset instance in this process and in the
// processes forked from it (DataLoader workers); the node's, every process
// that read through the first stream's cache folder.
enum class MetricsScope { kProcess = 0, kJob = 1, kNode = 2 };
// "process", "job" or "node"; else kInvalidArgument naming the three.
Result<MetricsScope> ParseMetricsScope(std::string_view name);

// `later`'s hosts with `earlier`'s counts of the same host subtracted (a
// host only `later` has is whole; in_flight is `later`'s).
std::vector<HostStatsSnapshot> HostsSince(const std::vector<HostStatsSnapshot>& later,
                                          const std::vector<HostStatsSnapshot>& earlier);

// What happened from `earlier` to `later` (two snapshots of one dataset):
// counts and histograms subtract; gauges and settings are `later`'s.
DatasetMetrics MetricsSince(const DatasetMetrics& later, const DatasetMetrics& earlier);

// {"totals": {...}, "window": {...}, "hosts": {...}, "diagnosis": "..."}:
// see docs/metrics.rst. `window` is MetricsSince of two snapshots.
std::string MetricsJson(const DatasetMetrics& totals, const DatasetMetrics& window);

}  // namespace sluice

#include "engine/dataset/dataset_metrics.h"

#include <map>
#include <utility>

#include "engine/dataset/diagnosis.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

ConsumerWaits WaitsSince(const ConsumerWaits& a, const ConsumerWaits& b) {
  ConsumerWaits w;
  w.total_ns = Minus(a.total_ns, b.total_ns);
  w.download_ns = Minus(a.download_ns, b.download_ns);
  w.peer_download_ns = Minus(a.peer_download_ns, b.peer_download_ns);
  w.cache_room_ns = Minus(a.cache_room_ns, b.cache_room_ns);
  w.decode_ns = Minus(a.decode_ns, b.decode_ns);
  w.other_ns = Minus(a.other_ns, b.other_ns);
  return w;
}

HostStatsSnapshot HostSince(const HostStatsSnapshot& a, const HostStatsSnapshot& b) {
  HostStatsSnapshot h = a;
  h.requests = Minus(a.requests, b.requests);
  h.attempts = Minus(a.attempts, b.attempts);
  h.retries = Minus(a.retries, b.retries);
  h.failed = Minus(a.failed, b.failed);
  h.throttles_429 = Minus(a.throttles_429, b.throttles_429);
  h.throttles_503 = Minus(a.throttles_503, b.throttles_503);
  for (size_t k = 0; k < h.errors.size(); ++k) h.errors[k] = Minus(a.errors[k], b.errors[k]);
  h.bytes = Minus(a.bytes, b.bytes);
  h.busy_us = Minus(a.busy_us, b.busy_us);
  h.first_byte = a.first_byte.Since(b.first_byte);
  h.transfer = a.transfer.Since(b.transfer);
  return h;
}

using Object = JsonValue::Object;
JsonValue Int(uint64_t v) { return JsonValue{static_cast<int64_t>(v)}; }
JsonValue Real(double v) { return JsonValue{v}; }
JsonValue Seconds(uint64_t ns) { return JsonValue{static_cast<double>(ns) / 1e9}; }

JsonValue Quantiles(const LogHistogram::Counts& h) {
  Object o;
  o.emplace_back("count", Int(h.count()));
  o.emplace_back("p50_ms", Real(h.QuantileMicros(0.50) / 1000));
  o.emplace_back("p95_ms", Real(h.QuantileMicros(0.95) / 1000));
  o.emplace_back("p99_ms", Real(h.QuantileMicros(0.99) / 1000));
  return JsonValue{std::move(o)};
}

JsonValue Host(const HostStatsSnapshot& h) {
  Object o;
  o.emplace_back("requests", Int(h.requests));
  o.emplace_back("attempts", Int(h.attempts));
  o.emplace_back("retries", Int(h.retries));
  o.emplace_back("failed", Int(h.failed));
  o.emplace_back("throttles_429", Int(h.throttles_429));
  o.emplace_back("throttles_503", Int(h.throttles_503));
  Object errors;
  for (size_t k = 0; k < h.errors.size(); ++k) {
    errors.emplace_back(HttpErrorKindName(static_cast<HttpErrorKind>(k)), Int(h.errors[k]));
  }
  o.emplace_back("errors", JsonValue{std::move(errors)});
  o.emplace_back("bytes", Int(h.bytes));
  o.emplace_back("in_flight", JsonValue{h.in_flight});
  o.emplace_back("busy_s", Real(static_cast<double>(h.busy_us) / 1e6));
  o.emplace_back("first_byte", Quantiles(h.first_byte));
  o.emplace_back("transfer", Quantiles(h.transfer));
  return JsonValue{std::move(o)};
}

// The counts every view has, totals and window alike.
Object Counts(const DatasetMetrics& m) {
  Object o;
  o.emplace_back("seconds", Real(m.seconds));
  o.emplace_back("samples", Int(m.samples));
  o.emplace_back("bytes", Int(m.bytes));
  o.emplace_back("batches", Int(m.batches));
  o.emplace_back("wait_s", Seconds(m.waits.total_ns));
  o.emplace_back("wait_download_s", Seconds(m.waits.download_ns));
  o.emplace_back("wait_peer_download_s", Seconds(m.waits.peer_download_ns));
  o.emplace_back("wait_cache_room_s", Seconds(m.waits.cache_room_ns));
  o.emplace_back("wait_decode_s", Seconds(m.waits.decode_ns));
  o.emplace_back("wait_other_s", Seconds(m.waits.other_ns));
  o.emplace_back("downloads", Int(m.downloads));
  o.emplace_back("download_errors", Int(m.download_errors));
  o.emplace_back("download_s", Seconds(m.download_ns));
  o.emplace_back("bytes_downloaded", Int(m.bytes_downloaded));
  o.emplace_back("shards_downloaded", Int(m.shards_downloaded));
  o.emplace_back("cache_hits", Int(m.cache_hits));
  o.emplace_back("shards_evicted", Int(m.shards_evicted));
  o.emplace_back("cache_peer_fetch_wait_s", Seconds(m.cache_peer_fetch_wait_ns));
  o.emplace_back("cache_room_wait_s", Seconds(m.cache_room_wait_ns));
  o.emplace_back("shards_skipped", Int(m.shards_skipped));
  o.emplace_back("samples_skipped", Int(m.samples_skipped));
  uint64_t requests = 0, retries = 0, throttles = 0;
  for (const HostStatsSnapshot& h : m.hosts) {
    requests += h.requests;
    retries += h.retries;
    throttles += h.throttles_429 + h.throttles_503;
  }
  o.emplace_back("requests", Int(requests));
  o.emplace_back("retries", Int(retries));
  o.emplace_back("throttles", Int(throttles));
  return o;
}

}  // namespace

DatasetMetrics MetricsSince(const DatasetMetrics& later, const DatasetMetrics& earlier) {
  DatasetMetrics w = later;
  w.seconds = later.seconds > earlier.seconds ? later.seconds - earlier.seconds : 0;
  w.samples = Minus(later.samples, earlier.samples);
  w.bytes = Minus(later.bytes, earlier.bytes);
  w.batches = Minus(later.batches, earlier.batches);
  w.waits = WaitsSince(later.waits, earlier.waits);
  w.downloads = Minus(later.downloads, earlier.downloads);
  w.download_errors = Minus(later.download_errors, earlier.download_errors);
  w.download_ns = Minus(later.download_ns, earlier.download_ns);
  w.bytes_downloaded = Minus(later.bytes_downloaded, earlier.bytes_downloaded);
  w.shards_downloaded = Minus(later.shards_downloaded, earlier.shards_downloaded);
  w.cache_hits = Minus(later.cache_hits, earlier.cache_hits);
  w.shards_evicted = Minus(later.shards_evicted, earlier.shards_evicted);
  w.cache_peer_fetch_wait_ns =
      Minus(later.cache_peer_fetch_wait_ns, earlier.cache_peer_fetch_wait_ns);
  w.cache_room_wait_ns = Minus(later.cache_room_wait_ns, earlier.cache_room_wait_ns);
  w.shards_skipped = Minus(later.shards_skipped, earlier.shards_skipped);
  w.samples_skipped = Minus(later.samples_skipped, earlier.samples_skipped);
  std::map<std::string, const HostStatsSnapshot*> before;
  for (const HostStatsSnapshot& h : earlier.hosts) before[h.host] = &h;
  for (HostStatsSnapshot& h : w.hosts) {
    auto it = before.find(h.host);
    if (it != before.end()) h = HostSince(h, *it->second);
  }
  return w;
}

std::string MetricsJson(const DatasetMetrics& totals, const DatasetMetrics& window) {
  Object totals_o = Counts(totals);
  totals_o.emplace_back("prefetch_lead_samples", Int(totals.prefetch_lead_samples));
  totals_o.emplace_back("cache_bytes_on_disk", Int(totals.cache_bytes_on_disk));
  totals_o.emplace_back("cache_limit", Int(totals.cache_limit));
  totals_o.emplace_back("fetch_concurrency", JsonValue{totals.fetch_concurrency});
  Object window_o = Counts(window);
  const double s = window.seconds > 0 ? window.seconds : 0;
  auto rate = [&](double v) { return Real(s > 0 ? v / s : 0.0); };
  window_o.emplace_back("samples_per_s", rate(static_cast<double>(window.samples)));
  window_o.emplace_back("mb_per_s", rate(static_cast<double>(window.bytes) / 1e6));
  window_o.emplace_back("download_mb_per_s",
                        rate(static_cast<double>(window.bytes_downloaded) / 1e6));
  window_o.emplace_back("wait_fraction", rate(static_cast<double>(window.waits.total_ns) / 1e9));
  Object hosts;
  for (const HostStatsSnapshot& h : totals.hosts) hosts.emplace_back(h.host, Host(h));
  Object all;
  all.emplace_back("remote", JsonValue{totals.remote});
  all.emplace_back("totals", JsonValue{std::move(totals_o)});
  all.emplace_back("window", JsonValue{std::move(window_o)});
  all.emplace_back("hosts", JsonValue{std::move(hosts)});
  all.emplace_back("diagnosis", JsonValue{Diagnose(window)});
  auto text = DumpPyJson(JsonValue{std::move(all)}, /*sort_keys=*/false);
  // Only strings that are not UTF-8 fail, and every string here is ASCII
  // text or a URL the user gave (checked UTF-8 when parsed).
  return text.ok() ? *text : std::string("{}");
}

}  // namespace sluice

#include "engine/dataset/dataset_metrics.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/dataset/diagnosis.h"
#include "formats/json/py_json.h"

namespace sluice {
namespace {

uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

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
  o.emplace_back("requests", Int(m.http_requests));
  o.emplace_back("retries", Int(m.http_retries));
  o.emplace_back("throttles", Int(m.http_throttles));
  auto mean = [&](uint64_t sum) {
    return Real(m.batches ? static_cast<double>(sum) / static_cast<double>(m.batches) : 0.0);
  };
  o.emplace_back("prefetch_lead_samples_mean", mean(m.lead_samples_sum));
  o.emplace_back("prefetch_lead_samples_min", Int(m.lead_samples_min));
  o.emplace_back("prefetch_lead_shards_mean", mean(m.lead_shards_sum));
  o.emplace_back("prefetch_lead_shards_min", Int(m.lead_shards_min));
  return o;
}

}  // namespace

Result<MetricsScope> ParseMetricsScope(std::string_view name) {
  if (name == "process") return MetricsScope::kProcess;
  if (name == "job") return MetricsScope::kJob;
  if (name == "node") return MetricsScope::kNode;
  return InvalidArgumentError("metrics scope \"" + std::string(name) +
                              "\": expected \"process\", \"job\" or \"node\"");
}

std::span<const CountField> CountFields() {
  // Append only: node records (node_metrics.cc) store the counts in this
  // order, and a longer list is a new record version there.
  static constexpr CountField kFields[] = {
      [](DatasetMetrics& m) -> uint64_t& { return m.samples; },
      [](DatasetMetrics& m) -> uint64_t& { return m.bytes; },
      [](DatasetMetrics& m) -> uint64_t& { return m.batches; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.total_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.download_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.peer_download_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.cache_room_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.decode_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.waits.other_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.downloads; },
      [](DatasetMetrics& m) -> uint64_t& { return m.download_errors; },
      [](DatasetMetrics& m) -> uint64_t& { return m.download_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.bytes_downloaded; },
      [](DatasetMetrics& m) -> uint64_t& { return m.shards_downloaded; },
      [](DatasetMetrics& m) -> uint64_t& { return m.cache_hits; },
      [](DatasetMetrics& m) -> uint64_t& { return m.shards_evicted; },
      [](DatasetMetrics& m) -> uint64_t& { return m.cache_peer_fetch_wait_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.cache_room_wait_ns; },
      [](DatasetMetrics& m) -> uint64_t& { return m.shards_skipped; },
      [](DatasetMetrics& m) -> uint64_t& { return m.samples_skipped; },
      [](DatasetMetrics& m) -> uint64_t& { return m.lead_samples_sum; },
      [](DatasetMetrics& m) -> uint64_t& { return m.lead_shards_sum; },
      [](DatasetMetrics& m) -> uint64_t& { return m.http_requests; },
      [](DatasetMetrics& m) -> uint64_t& { return m.http_retries; },
      [](DatasetMetrics& m) -> uint64_t& { return m.http_throttles; },
  };
  return kFields;
}

void SetHttpTotals(DatasetMetrics* m) {
  m->http_requests = m->http_retries = m->http_throttles = 0;
  for (const HostStatsSnapshot& h : m->hosts) {
    m->http_requests += h.requests;
    m->http_retries += h.retries;
    m->http_throttles += h.throttles_429 + h.throttles_503;
  }
}

std::vector<HostStatsSnapshot> HostsSince(const std::vector<HostStatsSnapshot>& later,
                                          const std::vector<HostStatsSnapshot>& earlier) {
  std::map<std::string, const HostStatsSnapshot*> before;
  for (const HostStatsSnapshot& h : earlier) before[h.host] = &h;
  std::vector<HostStatsSnapshot> since = later;
  for (HostStatsSnapshot& h : since) {
    auto it = before.find(h.host);
    if (it != before.end()) h = HostSince(h, *it->second);
  }
  return since;
}

DatasetMetrics MetricsSince(const DatasetMetrics& later, const DatasetMetrics& earlier) {
  DatasetMetrics w = later;
  w.seconds = later.seconds > earlier.seconds ? later.seconds - earlier.seconds : 0;
  for (CountField f : CountFields()) f(w) = Minus(CountOf(f, later), CountOf(f, earlier));
  w.hosts = HostsSince(later.hosts, earlier.hosts);
  return w;
}

std::string MetricsJson(const DatasetMetrics& totals, const DatasetMetrics& window) {
  Object totals_o = Counts(totals);
  totals_o.emplace_back("prefetch_lead_samples", Int(totals.prefetch_lead_samples));
  totals_o.emplace_back("prefetch_lead_shards", Int(totals.prefetch_lead_shards));
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
  window_o.emplace_back("readers", Int(window.readers));
  // Per reader: a job's workers wait side by side.
  const double readers = static_cast<double>(std::max<uint64_t>(window.readers, 1));
  window_o.emplace_back("wait_fraction",
                        rate(static_cast<double>(window.waits.total_ns) / 1e9 / readers));
  Object hosts;
  for (const HostStatsSnapshot& h : totals.hosts) {
    JsonValue host = Host(h);
    // The host's window: its counts since the previous report, and its rate.
    for (const HostStatsSnapshot& w : window.hosts) {
      if (w.host != h.host) continue;
      JsonValue in_window = Host(w);
      std::get<Object>(in_window.v).emplace_back("mb_per_s",
                                                 rate(static_cast<double>(w.bytes) / 1e6));
      std::get<Object>(host.v).emplace_back("window", std::move(in_window));
    }
    hosts.emplace_back(h.host, std::move(host));
  }
  Object all;
  all.emplace_back("remote", JsonValue{totals.remote});
  all.emplace_back("processes", Int(totals.processes));
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

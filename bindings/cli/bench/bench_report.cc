#include "bindings/cli/bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "formats/json/py_json.h"

namespace sluice::bench {
namespace {

using Object = JsonValue::Object;

JsonValue U(uint64_t v) { return JsonValue{static_cast<int64_t>(v)}; }
JsonValue I(int64_t v) { return JsonValue{v}; }
JsonValue D(double v) { return JsonValue{v}; }
JsonValue B(bool v) { return JsonValue{v}; }
JsonValue S(const std::string& v) { return JsonValue{v}; }
JsonValue Opt(const std::optional<uint64_t>& v) { return v ? U(*v) : JsonValue{}; }

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return Fmt("%.2f GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (uint64_t{1} << 20)) return Fmt("%.2f MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 1024) return Fmt("%.1f KiB", static_cast<double>(b) / 1024);
  return std::to_string(b) + " B";
}

}  // namespace

Percentiles SpreadMs(std::vector<uint64_t> ns) {
  Percentiles p;
  if (ns.empty()) return p;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(ns.size())));
    return static_cast<double>(ns[std::min(ns.size() - 1, k == 0 ? 0 : k - 1)]) / 1e6;
  };
  p.p50 = at(0.5), p.p90 = at(0.9), p.p99 = at(0.99), p.max = static_cast<double>(ns.back()) / 1e6;
  return p;
}

namespace {

// The node number of per_node[n] (a report filled by hand may leave
// planned_nodes empty: then the n-th node).
int64_t NodeOf(const BenchReport& r, size_t n) {
  return n < r.planned_nodes.size() ? r.planned_nodes[n] : static_cast<int64_t>(n);
}

}  // namespace

Result<std::string> ReportJson(const BenchReport& r) {
  JsonValue::Array planned;
  for (int64_t n : r.planned_nodes) planned.push_back(I(n));
  Object job = {{"remote", S(r.remote)},
                {"nodes", I(r.nodes)},
                {"planned_nodes", JsonValue{planned}},
                {"ranks_per_node", I(r.ranks_per_node)},
                {"workers_per_rank", I(r.workers_per_rank)},
                {"epochs", I(r.epochs)},
                {"batch_size", I(r.batch_size)},
                {"step_time_s", D(r.step_time_s)},
                {"cache_limit", Opt(r.cache_limit)},
                {"link_bandwidth", Opt(r.link_bandwidth)}};
  Object dataset = {{"samples", U(r.dataset_samples)},
                    {"shards", U(r.dataset_shards)},
                    {"stored_bytes", U(r.dataset_stored_bytes)},
                    {"cached_bytes", U(r.dataset_cached_bytes)},
                    {"epoch_size", I(r.epoch_size)},
                    {"planned_samples", U(r.planned_samples)},
                    {"shards_touched", U(r.shards_touched)}};
  Object throughput = {{"wall_s", D(r.wall_s)},
                       {"samples", U(r.samples)},
                       {"sample_bytes", U(r.sample_bytes)},
                       {"samples_per_s", D(r.samples_per_s)},
                       {"gb_per_s", D(r.gb_per_s)},
                       {"first_sample_s", D(r.first_sample_s)},
                       {"first_sample_max_s", D(r.first_sample_max_s)}};
  Object stalls = {{"batches", U(r.batches)},
                   {"total_s", D(r.stall_total_s)},
                   {"p50_ms", D(r.stall_ms.p50)},
                   {"p90_ms", D(r.stall_ms.p90)},
                   {"p99_ms", D(r.stall_ms.p99)},
                   {"max_ms", D(r.stall_ms.max)},
                   {"consumer_wait_s", D(r.consumer_wait_s)},
                   {"consumer_waits", B(r.consumer_waits)},
                   {"diagnosis", S(r.diagnosis)}};
  JsonValue::Array nodes;
  for (const NodeStats& n : r.per_node) {
    nodes.push_back(JsonValue{Object{{"bytes_downloaded", U(n.bytes_downloaded)},
                                     {"shards_downloaded", U(n.shards_downloaded)},
                                     {"cache_hits", U(n.cache_hits)},
                                     {"shards_evicted", U(n.shards_evicted)},
                                     {"peak_cache_bytes", U(n.peak_cache_bytes)}}});
  }
  Object cache = {{"bytes_downloaded", U(r.bytes_downloaded)},
                  {"shards_downloaded", U(r.shards_downloaded)},
                  {"cache_hits", U(r.cache_hits)},
                  {"shards_evicted", U(r.shards_evicted)},
                  {"cache_hit_ratio", D(r.cache_hit_ratio)},
                  {"egress_ratio", D(r.egress_ratio)},
                  {"per_node", JsonValue{std::move(nodes)}}};
  Object resources = {{"cpu_s", D(r.cpu_s)},
                      {"cpu_s_per_gb", D(r.cpu_s_per_gb)},
                      {"peak_rss_bytes", U(r.peak_rss_bytes)}};
  JsonValue::Array series;
  for (const SeriesPoint& p : r.series) {
    JsonValue::Array cache_bytes;
    for (uint64_t b : p.cache_bytes) cache_bytes.push_back(U(b));
    series.push_back(JsonValue{Object{{"t", D(p.t)},
                                      {"samples", U(p.samples)},
                                      {"sample_bytes", U(p.sample_bytes)},
                                      {"bytes_downloaded", U(p.bytes_downloaded)},
                                      {"cache_bytes", JsonValue{std::move(cache_bytes)}}}});
  }
  Object top = {{"mode", S(r.mode)},
                {"job", JsonValue{std::move(job)}},
                {"dataset", JsonValue{std::move(dataset)}},
                {"throughput", JsonValue{std::move(throughput)}},
                {"stalls", JsonValue{std::move(stalls)}},
                {"cache", JsonValue{std::move(cache)}},
                {"resources", JsonValue{std::move(resources)}},
                {"series_unit", S(r.series_unit)},
                {"series", JsonValue{std::move(series)}}};
  return DumpPyJson(JsonValue{std::move(top)}, false);
}

std::string ReportTable(const BenchReport& r) {
  std::string t;
  auto line = [&](const std::string& k, const std::string& v) {
    t += "  " + k + std::string(k.size() < 24 ? 24 - k.size() : 1, ' ') + v + "\n";
  };
  bool plan = r.mode == "plan";
  t += plan ? "sluice bench --plan-only (predicted from the planner, nothing downloaded)\n"
            : "sluice bench\n";
  line("dataset", r.remote);
  line("job", std::to_string(r.nodes) + " nodes x " + std::to_string(r.ranks_per_node) + " ranks x " +
                  std::to_string(r.workers_per_rank) + " workers, batch " + std::to_string(r.batch_size) +
                  ", " + std::to_string(r.epochs) + " epoch(s), step " + Fmt("%.4g s", r.step_time_s) +
                  ", cache_limit " + (r.cache_limit ? Bytes(*r.cache_limit) : std::string("none")));
  line("dataset size", std::to_string(r.dataset_samples) + " samples, " + std::to_string(r.dataset_shards) +
                           " shards, " + Bytes(r.dataset_stored_bytes) + " stored, " +
                           Bytes(r.dataset_cached_bytes) + " raw");
  if (r.planned_nodes.size() != static_cast<size_t>(r.nodes)) {
    std::string which;
    for (size_t k = 0; k < r.planned_nodes.size(); ++k) {
      if (k == 3 && r.planned_nodes.size() > 5) {
        which += ", ...";
        k = r.planned_nodes.size() - 2;
        continue;
      }
      which += (k ? ", " : "") + std::to_string(r.planned_nodes[k]);
    }
    line("planned nodes", std::to_string(r.planned_nodes.size()) + " of " + std::to_string(r.nodes) + " (" + which +
                              "); totals scale theirs by " +
                              Fmt("%.4g", static_cast<double>(r.nodes) / static_cast<double>(r.planned_nodes.size())) +
                              " (--plan-nodes)");
  }
  line("planned samples", std::to_string(r.planned_samples) + " (epoch size " + std::to_string(r.epoch_size) + ")");
  if (!plan) {
    line("samples read", std::to_string(r.samples) + " in " + Fmt("%.3f s", r.wall_s));
    line("throughput", Fmt("%.0f samples/s", r.samples_per_s) + ", " + Fmt("%.3f GB/s", r.gb_per_s));
    line("first sample", Fmt("%.3f s", r.first_sample_s) + " (slowest worker " +
                             Fmt("%.3f s", r.first_sample_max_s) + ")");
    line("stalls per batch", Fmt("p50 %.2f ms", r.stall_ms.p50) + Fmt(", p90 %.2f ms", r.stall_ms.p90) +
                                 Fmt(", p99 %.2f ms", r.stall_ms.p99) + Fmt(", max %.2f ms", r.stall_ms.max) +
                                 " over " + std::to_string(r.batches) + " batches" +
                                 Fmt(", %.3f s in all", r.stall_total_s));
    line("engine waits", Fmt("%.3f s (consumer_wait_ns, all workers)", r.consumer_wait_s));
    if (!r.diagnosis.empty()) line("diagnosis", r.diagnosis);
  } else {
    line("consumer waits", r.consumer_waits ? Fmt("yes, %.3f s in all (predicted)", r.stall_total_s)
                                            : std::string(r.link_bandwidth ? "no (predicted)"
                                                                           : "unknown (no link_bandwidth)"));
    if (r.link_bandwidth) {
      line("first sample", Fmt("%.3f s", r.first_sample_s) + " (slowest worker " +
                               Fmt("%.3f s", r.first_sample_max_s) + ", predicted)");
      line("stalls per batch", Fmt("p50 %.2f ms", r.stall_ms.p50) + Fmt(", p99 %.2f ms", r.stall_ms.p99) +
                                   Fmt(", max %.2f ms (predicted)", r.stall_ms.max));
    }
  }
  for (size_t n = 0; n < r.per_node.size(); ++n) {
    const NodeStats& s = r.per_node[n];
    line("node " + std::to_string(NodeOf(r, n)), Bytes(s.bytes_downloaded) + " downloaded (" +
                                          std::to_string(s.shards_downloaded) + " shards), " +
                                          std::to_string(s.cache_hits) + " hits, " +
                                          std::to_string(s.shards_evicted) + " evictions, peak cache " +
                                          Bytes(s.peak_cache_bytes));
  }
  line("egress", Fmt("%.3f x the stored dataset per node", r.egress_ratio));
  if (!plan) {
    line("cache hit ratio", Fmt("%.3f", r.cache_hit_ratio));
    line("cpu", Fmt("%.3f s", r.cpu_s) + Fmt(" (%.3f s per GB read)", r.cpu_s_per_gb));
    line("peak rss", Bytes(r.peak_rss_bytes) + " (largest worker)");
  }
  return t;
}

std::string SeriesCsv(const BenchReport& r) {
  std::string t = "t,samples,sample_bytes,bytes_downloaded";
  for (size_t n = 0; n < r.per_node.size(); ++n) t += ",cache_node" + std::to_string(NodeOf(r, n));
  t += "\n";
  for (const SeriesPoint& p : r.series) {
    t += Fmt("%.4f", p.t) + "," + std::to_string(p.samples) + "," + std::to_string(p.sample_bytes) + "," +
         std::to_string(p.bytes_downloaded);
    for (uint64_t b : p.cache_bytes) t += "," + std::to_string(b);
    t += "\n";
  }
  return t;
}

}  // namespace sluice::bench

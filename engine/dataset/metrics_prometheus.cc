#include "engine/dataset/metrics_prometheus.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace sluice {
namespace {

// A label value with \, " and newline escaped, as the format asks.
std::string Escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Value(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class Writer {
 public:
  explicit Writer(std::string process) : process_(std::move(process)) {}
  // Starts metric family `name` (HELP and TYPE lines).
  void Family(const std::string& name, const char* type, const char* help) {
    text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void Sample(const std::string& name, double v,
              const std::vector<std::pair<std::string, std::string>>& labels = {}) {
    text_ += name + "{process=\"" + Escaped(process_) + "\"";
    for (const auto& [k, l] : labels) text_ += "," + k + "=\"" + Escaped(l) + "\"";
    text_ += "} " + Value(v) + "\n";
  }
  void One(const std::string& name, const char* type, const char* help, double v) {
    Family(name, type, help);
    Sample(name, v);
  }
  std::string& text() { return text_; }

 private:
  const std::string process_;
  std::string text_;
};

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }
double D(uint64_t v) { return static_cast<double>(v); }

}  // namespace

std::string MetricsPrometheus(const DatasetMetrics& m, const std::string& process) {
  Writer w(process);
  w.One("sluice_samples_total", "counter", "Samples handed to the consumer.", D(m.samples));
  w.One("sluice_sample_bytes_total", "counter", "Stored bytes of the samples handed out.",
        D(m.bytes));
  w.Family("sluice_wait_seconds_total", "counter",
           "Seconds the consumer waited for shards, by what the shard's open was doing.");
  const std::pair<const char*, uint64_t> causes[] = {
      {"download", m.waits.download_ns},     {"peer_download", m.waits.peer_download_ns},
      {"cache_room", m.waits.cache_room_ns}, {"decode", m.waits.decode_ns},
      {"other", m.waits.other_ns}};
  for (const auto& [cause, ns] : causes) {
    w.Sample("sluice_wait_seconds_total", Seconds(ns), {{"cause", cause}});
  }
  w.One("sluice_downloads_total", "counter", "Objects fetched from remotes into the cache.",
        D(m.downloads));
  w.One("sluice_download_errors_total", "counter", "Fetches from remotes that failed.",
        D(m.download_errors));
  w.One("sluice_downloaded_bytes_total", "counter", "Bytes fetched from remotes.",
        D(m.bytes_downloaded));
  w.One("sluice_cache_hits_total", "counter", "Cache entries found present.", D(m.cache_hits));
  w.One("sluice_cache_evictions_total", "counter", "Cache entries evicted under cache_limit.",
        D(m.shards_evicted));
  w.One("sluice_cache_bytes", "gauge", "Bytes the node's cache holds for the dataset.",
        D(m.cache_bytes_on_disk));
  w.One("sluice_prefetch_lead_samples", "gauge",
        "Samples ready past the consumer's last batch.", D(m.prefetch_lead_samples));
  w.One("sluice_prefetch_lead_shards", "gauge",
        "Shards the prefetcher held open for the consumer's position and beyond at its last "
        "batch.",
        D(m.prefetch_lead_shards));
  w.One("sluice_batches_total", "counter", "Batches handed to the consumer.", D(m.batches));
  w.One("sluice_prefetch_lead_samples_summed_total", "counter",
        "Each batch's lead in samples added up (over sluice_batches_total: the mean lead).",
        D(m.lead_samples_sum));
  w.One("sluice_prefetch_lead_shards_summed_total", "counter",
        "Each batch's lead in shards added up (over sluice_batches_total: the mean lead).",
        D(m.lead_shards_sum));
  struct Family {
    const char* name;
    const char* help;
    uint64_t HostStatsSnapshot::*field;
  };
  const Family families[] = {
      {"sluice_http_requests_total", "HTTP requests begun.", &HostStatsSnapshot::requests},
      {"sluice_http_retries_total", "HTTP attempts made again.", &HostStatsSnapshot::retries},
      {"sluice_http_failed_total", "HTTP requests that ended in an error.",
       &HostStatsSnapshot::failed},
      {"sluice_http_received_bytes_total", "HTTP response body bytes received.",
       &HostStatsSnapshot::bytes}};
  for (const Family& f : families) {
    w.Family(f.name, "counter", f.help);
    for (const HostStatsSnapshot& h : m.hosts) w.Sample(f.name, D(h.*f.field), {{"host", h.host}});
  }
  w.Family("sluice_http_throttles_total", "counter", "HTTP answers 429 and 503.");
  for (const HostStatsSnapshot& h : m.hosts) {
    w.Sample("sluice_http_throttles_total", D(h.throttles_429),
             {{"host", h.host}, {"status", "429"}});
    w.Sample("sluice_http_throttles_total", D(h.throttles_503),
             {{"host", h.host}, {"status", "503"}});
  }
  w.Family("sluice_http_errors_total", "counter", "Failed HTTP attempts by kind.");
  for (const HostStatsSnapshot& h : m.hosts) {
    for (size_t k = 0; k < h.errors.size(); ++k) {
      w.Sample("sluice_http_errors_total", D(h.errors[k]),
               {{"host", h.host}, {"kind", HttpErrorKindName(static_cast<HttpErrorKind>(k))}});
    }
  }
  const std::pair<const char*, LogHistogram::Counts HostStatsSnapshot::*> timings[] = {
      {"sluice_http_first_byte_seconds", &HostStatsSnapshot::first_byte},
      {"sluice_http_transfer_seconds", &HostStatsSnapshot::transfer}};
  for (const auto& [name, field] : timings) {
    w.Family(name, "gauge",
             "HTTP time to first byte or transfer time since the process started, quantiles "
             "of a log-bucket histogram (within 19%).");
    for (const HostStatsSnapshot& h : m.hosts) {
      const LogHistogram::Counts& c = h.*field;
      const std::pair<const char*, double> quantiles[] = {{"0.5", 0.5}, {"0.95", 0.95},
                                                          {"0.99", 0.99}};
      for (const auto& [label, q] : quantiles) {
        w.Sample(name, c.QuantileMicros(q) / 1e6, {{"host", h.host}, {"quantile", label}});
      }
    }
  }
  return std::move(w.text());
}

}  // namespace sluice

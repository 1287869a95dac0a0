// Prometheus text for constructed totals: the exact lines of a family, label
// escaping, and one line per host and kind.
#include "engine/dataset/metrics_prometheus.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

// The labels every host series starts with, for process "12\"3".
constexpr const char* kHost = "{process=\"12\\\"3\",host=\"http://127.0.0.1:80\"";

TEST(MetricsPrometheus, FamiliesSamplesAndLabels) {
  DatasetMetrics m;
  m.samples = 1200;
  m.waits.download_ns = 2'500'000'000;
  m.waits.decode_ns = 1'000'000;
  HostStatsSnapshot h;
  h.host = "http://127.0.0.1:80";
  h.requests = 7;
  h.throttles_503 = 2;
  h.errors[static_cast<int>(HttpErrorKind::kThrottled)] = 2;
  h.first_byte.buckets[LogHistogram::BucketOf(1000)] = 7;  // middle 2^9.75 us
  m.hosts.push_back(h);
  const std::string text = MetricsPrometheus(m, "12\"3");
  EXPECT_NE(text.find("# HELP sluice_samples_total Samples handed to the consumer.\n"
                      "# TYPE sluice_samples_total counter\n"
                      "sluice_samples_total{process=\"12\\\"3\"} 1200\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_wait_seconds_total{process=\"12\\\"3\",cause=\"download\"} 2.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("sluice_wait_seconds_total{process=\"12\\\"3\",cause=\"decode\"} 0.001\n"),
            std::string::npos);
  EXPECT_NE(text.find("sluice_http_requests_total" + std::string(kHost) + "} 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("sluice_http_throttles_total" + std::string(kHost) + ",status=\"503\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("sluice_http_errors_total" + std::string(kHost) + ",kind=\"throttled\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("sluice_http_first_byte_seconds" + std::string(kHost) +
                      ",quantile=\"0.95\"} 0.00086107792921980366\n"),
            std::string::npos)
      << text;
  // Every line is a comment or `name{labels} value`, and ends the text.
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace sluice

// A dataset's totals (dataset_metrics.h) in Prometheus' text exposition
// format (0.0.4), for a file that node_exporter's textfile collector (or any
// scraper of such files) reads. Each process writes its own file; every
// series carries `process` (e.g. the pid), so the series of a node's
// processes are distinct and a query sums them (sum without (process)).
// Counters end in _total; gauges do not; time to first byte and transfer
// time are gauges per host and quantile (0.5, 0.95, 0.99). A node's sum
// (StreamingDataset::Metrics(kNode)) has no hosts, so no per-host series.
// Pure function.
#pragma once

#include <string>

#include "engine/dataset/dataset_metrics.h"

namespace sluice {

std::string MetricsPrometheus(const DatasetMetrics& totals, const std::string& process);

}  // namespace sluice

// One sentence naming what held a dataset's consumer back over a window of
// its counters (dataset_metrics.h), and what to change: the one place the
// bottleneck is decided (bindings and `sluice bench` show this text).
//
// The consumer's waits are split by cause (consumer_waits.h); the largest
// cause names the bottleneck when the consumer waited at least
// kDataBoundFraction of the window, else the loop is not data-bound.
// Pure function.
#pragma once

#include <string>

#include "engine/dataset/dataset_metrics.h"

namespace sluice {

inline constexpr double kDataBoundFraction = 0.05;

std::string Diagnose(const DatasetMetrics& window);

}  // namespace sluice

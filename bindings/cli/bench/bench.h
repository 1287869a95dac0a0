// The bench's one entry: options in, report out (JSON for the C ABI).
// Thread-safety: as RunBench (bench_run.h).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "bindings/cli/bench/bench_options.h"
#include "bindings/cli/bench/bench_report.h"

namespace sluice::bench {

// Runs the bench the options describe.
Result<BenchReport> Bench(const BenchOptions& options);

// ParseBenchOptions, Bench, ReportJson.
Result<std::string> BenchJson(std::string_view options_json);

}  // namespace sluice::bench

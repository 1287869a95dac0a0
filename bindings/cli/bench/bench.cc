#include "bindings/cli/bench/bench.h"

#include "bindings/cli/bench/bench_plan.h"
#include "bindings/cli/bench/bench_run.h"

namespace sluice::bench {

Result<BenchReport> Bench(const BenchOptions& options) {
  return options.plan_only ? PredictBench(options) : RunBench(options);
}

Result<std::string> BenchJson(std::string_view options_json) {
  SLUICE_ASSIGN_OR_RETURN(BenchOptions options, ParseBenchOptions(options_json));
  SLUICE_ASSIGN_OR_RETURN(BenchReport report, Bench(options));
  return ReportJson(report);
}

}  // namespace sluice::bench

// The benchmarks' reference for reading files: `cat FILES... > /dev/null`.
#ifndef SLUICE_BENCH_COMMON_TIME_CAT_H_
#define SLUICE_BENCH_COMMON_TIME_CAT_H_

#include <string>
#include <vector>

namespace sluice::bench {

// Runs `cat FILES... > /dev/null` (cat found on PATH) and waits for it.
// Returns its wall seconds, or a negative number when it could not be started
// or did not exit 0. Blocks the calling thread; no shared state.
double TimeCat(const std::vector<std::string>& files);

}  // namespace sluice::bench

#endif  // SLUICE_BENCH_COMMON_TIME_CAT_H_

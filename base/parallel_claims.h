// ParallelClaims: a large loop of independent items run on the machine's
// cores (a million files' stats, or their Parquet footers' decodes).
//
//   ParallelClaims(n, /*claim=*/64, /*max_threads=*/8,
//                  [&](size_t begin, size_t end) { ... items [begin, end) ... });
//
// The items [0, n) are handed out in claims of `claim` consecutive items
// to up to `max_threads` threads, the caller's among them: claims are taken
// in order but run in any order, so `work` must be safe to call at once for
// disjoint ranges, and a caller that needs the items' results in order
// stores them by index. Fewer than two claims' worth runs on the caller
// alone.
//
// Errors: the first exception a claim throws stops the taking of further
// claims and is rethrown on the caller once every thread has stopped (a
// `work` that returns its errors as values throws nothing). A thread that
// cannot be started is not an error: the ones started and the caller do
// the work.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace sluice {

template <typename Work>
void ParallelClaims(size_t n, size_t claim, size_t max_threads, const Work& work) {
  claim = std::max<size_t>(claim, 1);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;  // written by the one thread that set `failed`
  auto run = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(claim)) < n;) {
      try {
        work(i, std::min(n, i + claim));
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
        return;
      }
    }
  };
  size_t threads = n < 2 * claim ? 1
                                 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1,
                                                      std::max<size_t>(max_threads, 1));
  threads = std::min(threads, (n + claim - 1) / claim);
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the ones started, and this one, do it
    }
  }
  run();
  for (std::thread& t : helpers) t.join();  // after which `failure` is seen here
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sluice

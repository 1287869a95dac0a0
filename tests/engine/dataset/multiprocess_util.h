// Helpers for the tests that fork one process per (node, rank, worker):
// run a worker's epoch in a child, hand its ids, sample bytes and counters to
// the parent through a file, and fork/wait.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/dataset/streaming_dataset.h"
#include "engine/runtime/event_loop.h"

namespace sluice::testing {

struct WorkerResult {
  std::vector<int64_t> ids;
  std::vector<std::string> bytes;
  DatasetCounters counters;
};

// Child side: writes ids, sample bytes and counters; parent side reads them.
Status WriteResult(const std::string& path, const std::vector<int64_t>& ids,
                   const std::vector<std::string>& bytes, const DatasetCounters& c);
WorkerResult ReadResult(const std::string& path);

// Runs one worker's epoch (from sample_in_epoch) in this (child) process,
// in NextBatch calls of 16, and writes the result to `out`; returns the exit
// code (0 = ok, the error is printed to stderr otherwise).
int RunWorker(DatasetOptions o, int64_t worker, int64_t num_workers, const std::string& out,
              int64_t sample_in_epoch = 0);

// Uploads every file under `dir` to the store `url` (keys relative to
// `dir`) from a child process, so this process starts no event loop thread
// before the test forks its readers; `before` runs first on the child's
// loop (e.g. to create a container). 0 when every file went up.
int UploadTree(const std::string& url, const std::string& dir,
               const std::function<Status(EventLoop&)>& before = nullptr);

// fork(); the child runs `body` and _exits with its value.
pid_t Fork(const std::function<int()>& body);
// The child's exit code, or 128 + the signal that killed it.
int WaitExit(pid_t pid);

}  // namespace sluice::testing

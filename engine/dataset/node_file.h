// A file that one process per node makes and every other process of the
// node reads: a stream's index.json (downloaded) or its file listing
// (listed). The first process to want it makes it while holding an OFD
// lock in the cache's state folder (released by the kernel if that process
// dies, so a crash never wedges the others); the rest wait for the lock,
// bounded by `wait_timeout`, then find the file made.
// Thread-safe (no shared state beyond the files).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "base/env.h"
#include "base/status.h"

namespace sluice {

// Makes `path` with `make` unless it exists, once per node: `make` runs
// under the lock at <state_dir>/<lock_name> and must leave `path` complete
// (written under a temporary name and renamed) or return an error.
// kDeadlineExceeded after `wait_timeout` of waiting for another process.
// With `current`, an existing `path` counts as made only when `current()`
// says so (asked before the lock and again under it); otherwise it is made
// again. The lock and the checks go through `env` (`make` uses its own).
// Before making, under the lock, `path`'s temporaries (base/file.h's names:
// only a maker holding the lock writes them, so any found is a killed
// maker's) and the other temporaries in its folder whose process is gone
// are deleted.
Status MakeOncePerNode(const std::string& path, const std::string& state_dir,
                       const std::string& lock_name, std::chrono::milliseconds wait_timeout,
                       const std::function<Status()>& make,
                       const std::function<bool()>& current = nullptr,
                       Env* env = Env::Default());

}  // namespace sluice

// Helpers shared by the shard cache tests: scratch folders, shard contents,
// fetch functions, forked children and folder sizes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/status.h"
#include "engine/cache/shard_cache.h"
#include "tests/common/temp_dir.h"

namespace sluice::cache_test {

// The tests' temporary folder (removed only by the process that made it).
using ScratchDir = testing::TempDir;

// The exact bytes of shard `index` with `bytes` bytes.
std::string ShardBytes(size_t index, uint64_t bytes);

// Shards "s<i>" of `sizes[i]` bytes.
std::vector<ShardSpec> MakeSpecs(const std::vector<uint64_t>& sizes);

// Opens a cache over `root` (default options otherwise) with `specs` and
// closes it: "ok", or the error as Status::ToString.
std::string OpenError(const std::string& root, std::vector<ShardSpec> specs);

// A fetch function that appends "<index>\n" to `log_path` (O_APPEND, so
// lines from many processes never interleave), optionally sleeps, then
// writes ShardBytes(index, bytes) to the temp path.
ShardCache::FetchFn LoggingFetch(size_t index, uint64_t bytes, std::string log_path,
                                 std::chrono::microseconds delay = {});

// The whole file, or "<error: ...>" so a comparison fails instead of crashing.
std::string Slurp(const std::string& path);

// Writes `data` to `path` (creates or truncates).
void WriteWhole(const std::string& path, const std::string& data);

// Number of "<index>\n" lines in the log per index (size `count`).
std::vector<int> CountFetches(const std::string& log_path, size_t count);

// Regular files below `root` (all of them: the cache keeps its state
// elsewhere), as sorted relative names.
std::vector<std::string> ListFiles(const std::string& root);

// Sum of sizes of regular files below `root`, each
// inode counted once so a rename during the walk cannot count twice.
uint64_t FolderBytes(const std::string& root);

// The owner of a temporary whose process is gone: this pid with another
// start time (as if the pid had been reused by this process).
TempOwner GoneOwner();

// Forks; the child runs `body` and _exits with its return value.
pid_t Spawn(const std::function<int()>& body);

// Waits for `pid` up to `timeout`; returns its exit code, or -(signal) when
// killed, or -1000 after killing it on timeout.
int WaitChild(pid_t pid, std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace sluice::cache_test

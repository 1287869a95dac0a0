// An epoch's plan checkpoints (planner::PlanCheckpoints), made once per node
// and read by every other process of the node: without them each of a
// node's workers replays the random draws of every canonical node before
// its own (engine/planner/README.md, "the floor"), 5-7 s at 4B samples.
//
// The node's first process to want epoch E's checkpoints computes them and
// writes them (planner/checkpoints_file.h: versioned, checksummed, keyed by
// planner::CheckpointsKey of the request: the shards, weights, shuffle and
// epoch) to plan_checkpoints.<plan>.<E>.bin in the cache state folder of
// `root` (engine/cache/state_dir.h; <plan>: NodePlanDigest in 16 hex digits),
// under a temporary name renamed into place,
// while holding a lock (node_file.h's MakeOncePerNode: the kernel drops it
// if that process dies, so a crash mid-write never wedges the others). The
// others wait for that lock (bounded by `wait_timeout`), then map the file
// and check it: a file that is damaged, truncated, of another layout or
// made for another request (stale) is never used; it is made again. Waiting
// rather than planning alone: the checkpoints cost what one worker's replay
// costs (both draw the epoch up to the worker's node), and a worker planned
// from them adds only its own nodes' draws, so a waiting process is ready
// no later than one that replays, and the node spends one replay, not one
// per process (BENCHMARKS.md, "Shared plan checkpoints").
//
// Lifetime: publishing epoch E's file removes the files of the same plan
// for epochs before E - 1, so a plan keeps at most its current and next
// epoch's (the prefetch publishes E + 1 while E runs). It also removes the
// files of every other plan none of whose files was written in the last
// kOtherPlansIdle (7 days): a job still running that plan publishes each
// epoch's file, so only an idle one loses them, and another job of the node
// keeps its own. A process that
// still wants a removed epoch makes it again (correct, only slower). A
// reader maps a file only while it copies the checkpoints out; a file
// removed meanwhile stays readable through that mapping (on Linux an
// unlinked file lives until its last mapping goes), so removing never
// changes what a reader gets.
// Thread-safe (no shared state beyond the files).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "engine/planner/plan.h"

namespace sluice {

// How long another plan's files stay after the newest of them was written
// (Lifetime above).
inline constexpr std::chrono::seconds kOtherPlansIdle{7 * 24 * 3600};

// Where a dataset's processes share checkpoints: the cache state folder of
// `root` (its first stream's local folder).
struct NodeCheckpointsPlace {
  std::string root;
  std::chrono::milliseconds wait_timeout{0};
  Env* env = Env::Default();
};

// The checkpoints of `request`'s epoch through the node's file, or null
// when they do not apply (planner::CheckpointsApply: another shuffle or
// batching, a mixture). `made`, when given, is set when this call computed
// them (no valid file was there). Errors: PlanCheckpoints' (Mosaic's),
// the state folder's, kDeadlineExceeded after `wait_timeout` of waiting
// for another process. When the file cannot be written (a full disk) the
// checkpoints computed are returned all the same.
Result<std::shared_ptr<const planner::EpochCheckpoints>> NodeEpochCheckpoints(const NodeCheckpointsPlace& place,
                                                                              const planner::PlanRequest& request,
                                                                              bool* made = nullptr);

// What names a plan's files: planner::CheckpointsKey of `request` at
// epoch 0, the same for every epoch of one plan. Errors: CheckpointsKey's.
Result<uint64_t> NodePlanDigest(const planner::PlanRequest& request);

// The file NodeEpochCheckpoints uses for `request`'s epoch under `root`.
Result<std::string> NodeCheckpointsPath(const std::string& root, const planner::PlanRequest& request,
                                        Env* env = Env::Default());

// For a planning caller, where sharing is an optimisation: the checkpoints,
// or null on any error (the plan is then made without them, as it would be
// alone, and reports its own errors).
std::shared_ptr<const planner::EpochCheckpoints> SharedEpochCheckpoints(const NodeCheckpointsPlace& place,
                                                                        const planner::PlanRequest& request);

// Called between the two halves of the file's write (tests: a process
// killed mid-write). Not thread-safe; set before planning starts.
void SetCheckpointsWriteHookForTesting(std::function<void()> hook);

}  // namespace sluice

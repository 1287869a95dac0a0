// A worker's pass planned a window at a time (planner::PlanWorkerWindows),
// for a pass whose whole plan is too large to hold (one process reading an
// epoch of billions of samples: kPassBytesPerPosition a position).
//
// PlanWorkerWindows pushes windows into a callback and keeps its state (the
// partition's runs, one reader per canonical node being read, generator
// states) on its own stack. Rather than turn that state into a pull-based
// object, a producer thread runs it and fills a bounded queue: planning
// overlaps reading, the planner stays as it is, and memory is bounded by
// `depth` windows queued plus the one being filled (and the ones the
// consumer holds). Each window's ids are located (their shards) on
// the producer too, once the queue has room for it.
//
// Windows hold exactly `window_ids` ids each (the last one fewer, possibly
// none): the producer holds a full window back until the next id arrives,
// so every window knows whether it is the pass's last.
//
// Errors: a planner error, an error or exception (std::bad_alloc included)
// of the producer's own work, or a failure to start the thread, is kept and
// returned by Take once the windows made before it are taken (so the
// consumer meets it where the pass stopped), and by every later Take.
// Cancel (and the destructor) wake every wait and make the producer stop:
// its planner checks a flag between chunks of its work (a window of slots,
// a canonical node drawn over) and returns kCancelled, so a close waits
// for one chunk at most, not for the window being planned; the destructor
// joins it.
//
// The thread starts on the first Start, Take or PeekShards, never in the
// constructor (a process that forks after constructing is safe until then).
// Take and PeekShards may be called from different threads (the consumer
// and its prefetch thread); Cancel from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/status.h"
#include "engine/dataset/skip_ranges.h"
#include "engine/planner/plan.h"
#include "formats/dataset/sample_locator.h"

namespace sluice {

// Consecutive positions of a pass: ids[k] lives in shard_of[k] (its index
// there is the id less the shard's first id: not held).
struct PassWindow {
  std::vector<int64_t> ids;
  std::vector<size_t> shard_of;
  bool last = false;  // no window follows
};

// Which worker's plan, in windows of how many ids.
struct PassWindowSource {
  planner::PlanRequest request;
  int64_t node = 0, rank_in_node = 0, worker = 0;
  size_t window_ids = 1;  // >= 1
  // The worker's whole plan when it was made already (a shuffle the
  // planner cannot plan in windows, whose head is the whole): windowed
  // from it rather than planned again.
  std::shared_ptr<const std::vector<int64_t>> planned = nullptr;
  // Skipped steps ahead: `request` and `worker` are then the rank's whole
  // order (one worker, worker 0), which this deals out (StreamingDataset::
  // WorkerIds's rule, a window at a time).
  std::optional<SkipDealer> skip = std::nullopt;
  // The node's checkpoints of the epoch (node_checkpoints.h), or null.
  std::shared_ptr<const planner::EpochCheckpoints> checkpoints = nullptr;
};

// The windows a pass queues ahead of its consumer: one is enough for the
// planning to overlap the reading (the prefetcher takes windows ahead
// itself), and each costs 16 bytes an id.
inline constexpr size_t kPassWindowsQueued = 1;

class PassWindows {
 public:
  // `locator` maps the ids to shards; depth >= 1 windows are queued ahead.
  PassWindows(PassWindowSource source, std::shared_ptr<const SampleLocator> locator,
              size_t depth = kPassWindowsQueued);
  ~PassWindows();
  PassWindows(const PassWindows&) = delete;
  PassWindows& operator=(const PassWindows&) = delete;

  // Starts the producer (once; later calls do nothing).
  void Start();
  // The next window, waiting for it. After the last: kOutOfRange.
  Result<PassWindow> Take();
  // The shards of the next window's first `count` positions (waiting for
  // it), without taking it: what a prefetcher opens ahead. Empty after the
  // last window; the error Take would return.
  Result<std::vector<size_t>> PeekShards(size_t count);
  // Ends every wait (they return kCancelled) and stops the producer.
  void Cancel();

  // Tests only: called on the producer before each window is queued, with
  // its index; an error (or exception) it returns (throws) is the
  // producer's. Set it while no pass runs; null (the default) for none.
  static void SetWindowHookForTesting(std::function<Status(size_t window)> hook);

 private:
  void Produce();  // the thread's body: no exception leaves it
  Status Plan();   // PlanWorkerWindows into the queue
  // Locates `w` and queues it, waiting for room.
  Status Push(PassWindow w);
  // Called with mu_ held: waits for a window, an error or cancellation.
  Status WaitFront(std::unique_lock<std::mutex>& lock);

  const PassWindowSource source_;
  const std::shared_ptr<const SampleLocator> locator_;
  const size_t depth_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PassWindow> queue_;
  Status error_ = Status::Ok();
  bool started_ = false, cancelled_ = false, finished_ = false;
  // cancelled_, for the planner to check between chunks of its work
  // without the lock.
  std::atomic<bool> stop_planning_{false};
  size_t pushed_ = 0;  // windows queued so far (the producer's)
  std::thread thread_;
};

}  // namespace sluice

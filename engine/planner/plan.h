// The epoch planner's entry point: which global sample ids every worker reads
// in one epoch, sample for sample as mosaicml-streaming's generate_work.
// Spec: tests/data/mosaic/README.md section 3. All functions are pure and
// thread-safe; results are plain values owned by the caller.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/planner/mixture_schedule.h"
#include "engine/planner/partition.h"
#include "engine/planner/plan_cancel.h"
#include "engine/planner/shuffle.h"
#include "engine/planner/weights.h"
#include "engine/planner/work_array.h"
#include "engine/random/numpy_random.h"

namespace sluice::planner {

enum class BatchingMethod { kRandom, kPerStream, kStratified, kDevicePerStream };
enum class SamplingMethod { kBalanced, kFixed };

// "random" | "per_stream" | "stratified" | "device_per_stream"; else ValueError.
Result<BatchingMethod> ParseBatchingMethod(std::string_view name);
// "balanced" | "fixed"; else ValueError.
Result<SamplingMethod> ParseSamplingMethod(std::string_view name);
// The names the parsers above read.
std::string_view BatchingMethodName(BatchingMethod method);
std::string_view SamplingMethodName(SamplingMethod method);

// StreamingDataset's planning arguments, Mosaic's names and defaults.
struct PlanConfig {
  std::optional<int64_t> num_canonical_nodes;  // None: 64*P for py1s/py2s, else P
  std::optional<int64_t> batch_size;           // required
  bool shuffle = false;
  ShuffleAlgo shuffle_algo = ShuffleAlgo::kPy1e;
  uint64_t shuffle_seed = 9176;
  std::optional<int64_t> shuffle_block_size;   // None: max(4_000_000 // C, 1 << 18)
  PartitionAlgo partition_algo = PartitionAlgo::kRelaxed;
  BatchingMethod batching_method = BatchingMethod::kRandom;
  SamplingMethod sampling_method = SamplingMethod::kBalanced;
  int64_t sampling_granularity = 1;
  std::optional<int64_t> replication;
  std::optional<int64_t> epoch_size;           // see ParseEpochSize for strings
  std::optional<int64_t> initial_physical_nodes;
  // Sluice's extension: stream weights by samples seen in the epoch
  // (mixture_schedule.h). Requires epoch_size and random batching, and no
  // stream weight; the epoch is then the schedule's sequence (README.md,
  // "Mixture schedules"), not Mosaic's.
  std::optional<MixtureSchedule> mixture;
  // The schedules `mixture` replaced at resumes, the past kept (README.md,
  // "Changing a schedule at a checkpoint"): in epoch `epoch`, `schedule`
  // decided the positions from the previous change of that epoch (or 0) up
  // to `until`, and `mixture` decides from the last change on. Other epochs
  // are `mixture`'s alone.
  struct MixtureChange {
    int64_t epoch = 0;
    int64_t until = 0;
    MixtureSchedule schedule;
  };
  std::vector<MixtureChange> mixture_past;
};

// One stream: its shards' sample counts and at most one weight.
struct StreamSpec {
  std::vector<int64_t> shard_sizes;
  StreamWeight weight;
};

// The real world. node/rank/worker select one worker for PlanWorker.
struct World {
  int64_t num_nodes = 1;
  int64_t ranks_per_node = 1;
  int64_t workers_per_rank = 1;
  std::optional<int64_t> node, rank, worker;
};

struct PlanRequest {
  PlanConfig config;
  std::vector<StreamSpec> streams;
  World world;
  int64_t epoch = 0;
  int64_t sample_in_epoch = 0;  // resumption offset (drop_first)
  // Threads PlanEpoch may use for random batching: 0 = its choice (one extra
  // thread for epochs of 2^20 ids or more), 1 = the calling thread only (for
  // py1e over a plain orig partition, the default configuration; other
  // shuffles keep their own helper thread). The plan is the same either way.
  int threads = 0;
};

// Values Mosaic resolves before planning (the "derived" block of the vectors).
struct PlanDerived {
  int64_t num_samples = 0;          // all streams' samples
  std::vector<int64_t> stream_first_id;
  Weighting weighting;              // per-stream proportion/repeat/choose, epoch size
  World parallel_world;             // after replication (node/rank/worker unset)
  int64_t replication = 1;
  int64_t num_canonical_nodes = 0;
  int64_t shuffle_block_size = 0;
  bool epoch_seed_change = false;
};

// Mosaic's default num_canonical_nodes for `physical_nodes` nodes: 64 per
// node for py1s and py2s, one per node for the other algorithms. The one
// owner of that default (DerivePlan and the bindings ask it).
int64_t DefaultCanonicalNodes(ShuffleAlgo algo, int64_t physical_nodes);

// Defaults, replication and stream weights; Mosaic's errors as
// "ValueError: ..." (kInvalidArgument).
Result<PlanDerived> DerivePlan(const PlanRequest& request);

// The whole 5-D array (P', R', W, batches, B) over the planning world
// (replication applied): global sample ids, -1 = padding. For epochs of 2^20
// ids or more it runs the partition and the py1e sorts on one extra thread
// unless request.threads == 1, joined before it returns (no thread outlives
// the call, so fork stays safe).
Result<WorkArray> PlanEpoch(const PlanRequest& request);

// About how many ids one worker's plan holds: its rank's share of the
// epoch (after stream weights) divided among the rank's workers, rounded
// up. For a caller that holds more per id than the planner (a reader's
// shard and index per position) to check its memory before planning.
// Errors: DerivePlan's.
Result<int64_t> WorkerPlanSize(const PlanRequest& request);

// The ids one worker reads, in order, -1 padding skipped. node and rank are
// real (replication maps them onto their planning rank). For the random
// batching method with py1e this costs memory proportional to the worker's
// share plus the shards and one shuffle block, and time proportional to the
// samples up to the end of the last canonical node it reads
// (engine/planner/README.md); py1s likewise with one shard's span in
// place of the block; the other shuffles hold the whole permutation.
// When `shuffle_warning` is given it receives the UserWarning Mosaic's
// shuffle gives while planning this epoch, word for word (its odd spacing
// included), or nullopt: py1e warns when some span's random block comes out
// smaller than the span, which leaves the span unshuffled. Deciding it
// draws past the worker's last canonical node only where a later shard's
// size leaves it to the draws. Random batching only (the other methods
// shuffle stream by stream; not checked).
// Before planning, the memory the plan holds is checked against what this
// process may use (size_check.h's CheckPlanMemory: an error saying how
// many samples, how many bytes and what to do instead); a std::bad_alloc
// while planning is returned as an error naming the epoch and worker (also
// for PlanEpoch, PlanWorkers, PlanWorkerHead and PlanWorkerWindows).
// `checkpoints`, when given, are PlanCheckpoints of the same request (any
// world, sample_in_epoch): py1e and py1s then start each canonical node the
// worker reads from its saved generator state instead of drawing over the
// nodes before it, so the time is that of the worker's own nodes. Other
// requests' checkpoints -> kInvalidArgument; other algorithms ignore them.
// `cancel`, when given, is checked between chunks of the work (a worker's
// partition, a canonical node shuffled or drawn over; CheckPlanCancelled):
// once it is true the plan stops with kCancelled, so a reader that closes
// while a thread of its plans a whole epoch (a shuffle that cannot be
// planned in windows, the next epoch) waits for one chunk, not the epoch.
struct EpochCheckpoints;
Result<std::vector<int64_t>> PlanWorker(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                                        std::optional<std::string>* shuffle_warning = nullptr,
                                        const EpochCheckpoints* checkpoints = nullptr,
                                        const std::atomic<bool>* cancel = nullptr);

// The start of a worker's plan, for a reader that wants its first sample
// before the rest is planned (a cold start: the first shard's fetch waits
// on the plan). `ids` are PlanWorker's first min(count, all) ids, exactly;
// errors and *shuffle_warning are PlanWorker's. Under random batching with
// py1e or py1s, or unshuffled (no mixture), only the worker's first
// `count` slots are answered: py1e draws its first canonical node and
// selects the sorted positions it needs instead of sorting the node (one
// canonical node of A, 500,000 samples: the whole plan sorts them all),
// and nothing past the head's last canonical node is drawn unless the
// warning depends on the draws. Otherwise the whole plan is made and
// returned. `whole`: `ids` are all of PlanWorker's (also when it has fewer
// than `count`).
struct WorkerHead {
  std::vector<int64_t> ids;
  bool whole = false;
};
// `checkpoints` as PlanWorker's.
Result<WorkerHead> PlanWorkerHead(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                                  int64_t count, std::optional<std::string>* shuffle_warning = nullptr,
                                  const EpochCheckpoints* checkpoints = nullptr);

// PlanWorker's ids handed to `sink` in order, at most `window` (>= 1) at a
// time, for a reader that cannot hold a worker's whole plan (one process
// reading a whole epoch of billions of samples: 8 bytes an id). Under random
// batching, unshuffled or shuffled by py1e or py1s, without a mixture, the
// plan is made in windows (any world, one canonical node a worker or
// several read interleaved): memory O(window + shards + canonical nodes +
// shuffle block x canonical nodes read at once), time PlanWorker's plus
// the draws of a canonical node still being read when a later one starts;
// the result is then true. Where those readers would hold more than 64 MiB
// and more than the whole plan (engine/planner/README.md), under the other
// shuffles, and with a mixture, the whole plan is made as PlanWorker makes
// it (and its memory checked first, see CheckPlanMemory) and handed out in
// windows: false. The same ids either
// way. A sink's error stops planning and is returned. *shuffle_warning as
// PlanWorker's, set when the plan is done.
using PlanWindowSink = std::function<Status(std::span<const int64_t> ids)>;
// `cancel`, when given, is checked between chunks of the work (a window
// of slots, a canonical node drawn over, a whole plan's window handed
// out): once it is true the planning stops with kCancelled, so a reader
// that closes need not wait for the window being planned. `checkpoints`
// as PlanWorker's.
Result<bool> PlanWorkerWindows(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                               int64_t window, const PlanWindowSink& sink,
                               std::optional<std::string>* shuffle_warning = nullptr,
                               const std::atomic<bool>* cancel = nullptr,
                               const EpochCheckpoints* checkpoints = nullptr);

// PlanWorker of several workers of the request's world, each one's ids in
// the order given. Under random batching with py1e or py1s the parts they
// read are drawn once for all of them (a node's workers share its canonical
// nodes: planning them together costs what one of them costs); otherwise
// each is planned as PlanWorker plans it. Errors: PlanWorker's.
struct WorkerAt {
  int64_t node = 0, rank = 0, worker = 0;  // real node and rank in node
};
Result<std::vector<std::vector<int64_t>>> PlanWorkers(const PlanRequest& request, std::span<const WorkerAt> workers,
                                                      const EpochCheckpoints* checkpoints = nullptr);

// Where each canonical node's draws start in an epoch's py1e or py1s shuffle
// (random batching), and the epoch's py1e narrow-block warning: what every
// worker of an epoch would otherwise replay on its own. Computing them costs
// the epoch's draws once (time Θ(samples), memory O(shards + canonical
// nodes)); they are 48 bytes per canonical node, so one process of a node
// can compute them and every worker use them. A plain value.
struct EpochCheckpoints {
  ShuffleAlgo algo = ShuffleAlgo::kPy1e;
  uint64_t seed = 0, epoch = 0;
  int64_t num_samples = 0, num_canonical_nodes = 0, block = 0;
  std::vector<numpy::Pcg64> node_start;  // generator at each node's first draw
  bool py1e_narrow_block = false;
};
// Errors: Mosaic's (as PlanEpoch), or kInvalidArgument when the request does
// not shuffle with py1e or py1s under random batching.
Result<EpochCheckpoints> PlanCheckpoints(const PlanRequest& request);
// Whether PlanCheckpoints has checkpoints to give for a plan of `config`
// (random batching shuffled with py1e or py1s, no mixture schedule).
bool CheckpointsApply(const PlanConfig& config);

// A torch DataLoader(batch_size=B, num_workers=W) over one planning rank's
// workers: each worker's ids (-1 skipped) cut into batches of B, the last one
// possibly short, taken from workers in turn, skipping exhausted ones.
std::vector<std::vector<int64_t>> DataLoaderBatches(const WorkArray& work, int64_t node, int64_t rank);
// The same from each worker's ids (as PlanWorker gives them), workers in order.
std::vector<std::vector<int64_t>> DataLoaderBatches(const std::vector<std::vector<int64_t>>& worker_ids,
                                                    int64_t batch_size);

}  // namespace sluice::planner

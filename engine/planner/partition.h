// Mosaic's get_partitions: which big ids (0..num_samples-1, before shuffling)
// each (node, rank, worker, batch, slot) reads. Spec: tests/data/mosaic/
// README.md section 3.5. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/planner/work_array.h"

namespace sluice::planner {

enum class PartitionAlgo { kOrig, kRelaxed };
class OrigLayout;

// "orig" / "relaxed"; anything else -> KeyError as Mosaic's registry lookup.
Result<PartitionAlgo> ParsePartitionAlgo(std::string_view name);
// The name ParsePartitionAlgo reads.
std::string_view PartitionAlgoName(PartitionAlgo algo);

struct PartitionArgs {
  int64_t num_samples = 0;
  int64_t num_canonical_nodes = 1;
  int64_t num_physical_nodes = 1;
  int64_t ranks_per_node = 1;
  int64_t workers_per_rank = 1;
  int64_t batch_size = 1;
  int64_t drop_first = 0;  // sample_in_epoch
  std::optional<int64_t> initial_physical_nodes;
};

// The whole (P, R, W, batches, B) array, or Mosaic's error ("ValueError: ...").
Result<WorkArray> GetPartitions(PartitionAlgo algo, const PartitionArgs& args);

// One worker's slice work[node][rank][worker], flattened batch-major (length
// batches * B, -1 padding included). Costs memory and time proportional to
// that slice only. Same errors as GetPartitions; node/rank/worker out of range
// -> kInvalidArgument. With `head` >= 0 the slice ends with the batch that
// holds its head-th non-padding slot (its start only, when that comes first:
// a plan's head, PlanWorkerHead).
Result<std::vector<int64_t>> GetWorkerPartition(PartitionAlgo algo, const PartitionArgs& args,
                                                int64_t node, int64_t rank, int64_t worker,
                                                int64_t head = -1);

// GetWorkerPartition's slice batch by batch, for a reader that holds a
// window of it rather than all of it (a worker that reads the whole epoch).
// Make validates as GetWorkerPartition. A plain value; Fill is const.
class WorkerSlots {
 public:
  static Result<WorkerSlots> Make(PartitionAlgo algo, const PartitionArgs& args, int64_t node, int64_t rank,
                                  int64_t worker);
  int64_t batches() const { return batches_; }
  int64_t batch_size() const { return args_.batch_size; }
  // Batches [b0, b1) of the slice (b1 <= batches()): (b1 - b0) * batch_size()
  // values into out, -1 padding included.
  void Fill(int64_t b0, int64_t b1, int64_t* out) const;

 private:
  WorkerSlots(PartitionArgs args, bool relaxed, int64_t node, int64_t rank, int64_t worker,
              std::shared_ptr<const OrigLayout> layout);
  PartitionArgs args_;
  bool relaxed_ = false;
  int64_t node_ = 0, rank_ = 0, worker_ = 0;
  int64_t W_ = 1, batches_ = 0, B0_ = 1;
  std::shared_ptr<const OrigLayout> layout_;
};

}  // namespace sluice::planner

// Mosaic's get_partitions: which big ids (0..num_samples-1, before shuffling)
// each (node, rank, worker, batch, slot) reads. Spec: tests/data/mosaic/
// README.md section 3.5. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/planner/work_array.h"

namespace sluice::planner {

enum class PartitionAlgo { kOrig, kRelaxed };

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

}  // namespace sluice::planner

// The samples of global training steps: at step s every rank takes the
// batch its torch DataLoader hands out s-th (DataLoaderBatches: its
// workers' batches in turn, worker s mod W first), so a loss at step s
// traces back to these ids without rerunning the job. The one owner of that
// rule for `sluice plan --steps` and sluice_plan_steps.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/planner/plan.h"

namespace sluice::planner {

// One rank's batch at one step: global sample ids, in the batch's order.
struct StepBatch {
  int64_t step = 0;
  int64_t rank = 0;  // global rank of the request's real world
  std::vector<int64_t> ids;
};

// The batches of steps [first, end) of global rank `rank`, or of every rank
// when `rank` < 0: step by step, rank by rank. Steps count from the
// request's sample_in_epoch in its epoch (a resumed DataLoader counts from
// there). A rank with no batch at a step (the epoch's tail) has none; steps
// past every rank's last are left out. Each node's workers are planned
// together (PlanWorkers), from the epoch's checkpoints when the ranks span
// nodes: the time and memory of those nodes' plans, of which only the
// range is kept. Errors: PlanWorkers'; kInvalidArgument for first < 0 or
// first >= end, a rank outside the world, no batch_size, or `first` at or
// past the last step the ranks take, saying how many they take.
Result<std::vector<StepBatch>> PlanSteps(const PlanRequest& request, int64_t rank, int64_t first, int64_t end);

}  // namespace sluice::planner

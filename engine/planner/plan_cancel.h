// The planner's check between chunks of its work (a window of slots, a
// worker's partition, a canonical node shuffled or drawn over), for a
// reader that closes while a thread of its plans: PlanWorker,
// PlanWorkerWindows and the whole-epoch shuffles take an optional flag
// and stop with kCancelled at their next check once it is true.
#pragma once

#include <atomic>
#include <functional>

#include "base/status.h"

namespace sluice::planner {

// kCancelled once `cancel` (null: never) is true. Calls the test hook first.
Status CheckPlanCancelled(const std::atomic<bool>* cancel);

// Tests only: called with the flag at each check, before it is read (a
// test may block there until the flag is set). Set it while nothing plans;
// null (the default) for none.
void SetPlanCancelCheckHookForTesting(std::function<void(const std::atomic<bool>* cancel)> hook);

}  // namespace sluice::planner

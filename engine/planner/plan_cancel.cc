#include "engine/planner/plan_cancel.h"

#include <utility>

namespace sluice::planner {
namespace {

std::function<void(const std::atomic<bool>*)>& CancelCheckHook() {
  static std::function<void(const std::atomic<bool>*)> hook;
  return hook;
}

}  // namespace

void SetPlanCancelCheckHookForTesting(std::function<void(const std::atomic<bool>* cancel)> hook) {
  CancelCheckHook() = std::move(hook);
}

Status CheckPlanCancelled(const std::atomic<bool>* cancel) {
  if (const auto& hook = CancelCheckHook()) hook(cancel);
  if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
    return CancelledError("planning stopped: its reader closed");
  }
  return Status::Ok();
}

}  // namespace sluice::planner

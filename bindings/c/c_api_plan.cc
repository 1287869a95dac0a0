// sluice_plan_*: Mosaic-identical epoch plans without reading any data.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_json.h"
#include "engine/planner/plan_steps.h"

struct sluice_plan {
  sluice::planner::WorkArray work;
  // Per (node, rank, worker): that worker's ids with -1 removed, built once.
  std::vector<std::vector<int64_t>> worker_ids;
};

namespace {
using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;
}  // namespace

extern "C" {

sluice_status sluice_default_num_canonical_nodes(const char* shuffle_algo, int64_t physical_nodes,
                                                 int64_t* out) {
  return Guard("sluice_default_num_canonical_nodes", [&] {
    if (shuffle_algo == nullptr) {
      return NullArgument("sluice_default_num_canonical_nodes", "shuffle_algo");
    }
    if (out == nullptr) return NullArgument("sluice_default_num_canonical_nodes", "out");
    if (physical_nodes < 1) {
      return Fail(sluice::InvalidArgumentError(
          "sluice_default_num_canonical_nodes: physical_nodes must be at least 1, got " +
          std::to_string(physical_nodes)));
    }
    auto algo = sluice::planner::ParseShuffleAlgo(shuffle_algo);
    if (!algo.ok()) return Fail(algo.status());
    *out = sluice::planner::DefaultCanonicalNodes(*algo, physical_nodes);
    return SLUICE_OK;
  });
}

sluice_status sluice_plan_create(const char* config_json, sluice_plan** out) {
  return Guard("sluice_plan_create", [&] {
    if (config_json == nullptr) return NullArgument("sluice_plan_create", "config_json");
    if (out == nullptr) return NullArgument("sluice_plan_create", "out");
    *out = nullptr;
    auto request = sluice::planner::ParsePlanRequest(config_json);
    if (!request.ok()) return Fail(request.status());
    auto work = sluice::planner::PlanEpoch(*request);
    if (!work.ok()) return Fail(work.status());
    auto plan = std::make_unique<sluice_plan>();
    plan->work = std::move(*work);
    const auto& w = plan->work;
    plan->worker_ids.resize(static_cast<size_t>(w.nodes() * w.ranks() * w.workers()));
    size_t k = 0;
    for (int64_t p = 0; p < w.nodes(); ++p) {
      for (int64_t r = 0; r < w.ranks(); ++r) {
        for (int64_t wk = 0; wk < w.workers(); ++wk, ++k) {
          for (int64_t b = 0; b < w.batches(); ++b) {
            for (int64_t s = 0; s < w.batch_size(); ++s) {
              int64_t id = w.At(p, r, wk, b, s);
              if (id >= 0) plan->worker_ids[k].push_back(id);
            }
          }
        }
      }
    }
    *out = plan.release();
    return SLUICE_OK;
  });
}

void sluice_plan_free(sluice_plan* plan) { delete plan; }

void sluice_plan_shape(const sluice_plan* plan, uint64_t shape[5]) {
  for (int i = 0; i < 5; ++i) shape[i] = plan ? static_cast<uint64_t>(plan->work.shape[i]) : 0;
}

sluice_status sluice_plan_worker_ids(const sluice_plan* plan, uint32_t node, uint32_t rank,
                                     uint32_t worker, const int64_t** ids, uint64_t* count) {
  return Guard("sluice_plan_worker_ids", [&] {
    if (plan == nullptr) return NullArgument("sluice_plan_worker_ids", "plan");
    if (ids == nullptr) return NullArgument("sluice_plan_worker_ids", "ids");
    if (count == nullptr) return NullArgument("sluice_plan_worker_ids", "count");
    const auto& w = plan->work;
    if (node >= w.nodes() || rank >= w.ranks() || worker >= w.workers()) {
      return Fail(sluice::OutOfRangeError(
          "sluice_plan_worker_ids: (node " + std::to_string(node) + ", rank " +
          std::to_string(rank) + ", worker " + std::to_string(worker) +
          ") is outside the plan's world of " + std::to_string(w.nodes()) + " x " +
          std::to_string(w.ranks()) + " x " + std::to_string(w.workers())));
    }
    const auto& v = plan->worker_ids[(node * w.ranks() + rank) * w.workers() + worker];
    *ids = v.data();
    *count = v.size();
    return SLUICE_OK;
  });
}

sluice_status sluice_plan_to_json(const sluice_plan* plan, char** out_json) {
  return Guard("sluice_plan_to_json", [&] {
    if (plan == nullptr) return NullArgument("sluice_plan_to_json", "plan");
    if (out_json == nullptr) return NullArgument("sluice_plan_to_json", "out_json");
    std::string text = sluice::planner::RenderWork(plan->work);
    char* buf = static_cast<char*>(std::malloc(text.size() + 1));
    if (buf == nullptr) return Fail(sluice::InternalError("sluice_plan_to_json: out of memory"));
    std::memcpy(buf, text.c_str(), text.size() + 1);
    *out_json = buf;
    return SLUICE_OK;
  });
}

sluice_status sluice_plan_steps(const char* config_json, int64_t rank, int64_t first_step,
                                int64_t end_step, int64_t** out_rows, uint64_t* out_count) {
  return Guard("sluice_plan_steps", [&] {
    if (config_json == nullptr) return NullArgument("sluice_plan_steps", "config_json");
    if (out_rows == nullptr) return NullArgument("sluice_plan_steps", "out_rows");
    if (out_count == nullptr) return NullArgument("sluice_plan_steps", "out_count");
    *out_rows = nullptr;
    *out_count = 0;
    auto request = sluice::planner::ParsePlanRequest(config_json);
    if (!request.ok()) return Fail(request.status());
    auto steps = sluice::planner::PlanSteps(*request, rank, first_step, end_step);
    if (!steps.ok()) return Fail(steps.status());
    uint64_t count = 0;
    for (const auto& batch : *steps) count += batch.ids.size();
    auto* rows = static_cast<int64_t*>(std::malloc(std::max<uint64_t>(count, 1) * 3 * sizeof(int64_t)));
    if (rows == nullptr) return Fail(sluice::InternalError("sluice_plan_steps: out of memory"));
    int64_t* at = rows;
    for (const auto& batch : *steps) {
      for (int64_t id : batch.ids) {
        *at++ = batch.step;
        *at++ = batch.rank;
        *at++ = id;
      }
    }
    *out_rows = rows;
    *out_count = count;
    return SLUICE_OK;
  });
}

}  // extern "C"

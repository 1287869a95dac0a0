#include "engine/planner/plan.h"

#include <algorithm>
#include <string>

#include "base/exception_status.h"
#include "engine/planner/batching.h"
#include "engine/planner/mixture_plan.h"
#include "engine/planner/plan_worker.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

// Mosaic's text as its source spells it: a string continued with backslashes
// across indented lines, so the indentation is part of it.
constexpr char kPy1eNarrowBlock[] =
    "Shuffle block size was smaller than shard size for some shards. This                  "
    "       will result in these shards not being shuffled with other shards. Set         "
    "                shuffle_block_size to a larger value for a higher quality shuffle.";

}  // namespace

static Result<WorkArray> PlanEpochDerived(const PlanRequest& request, const PlanDerived& derived);

// The samples an epoch's plan covers (after stream weights).
static int64_t EpochSamples(const PlanDerived& d) {
  return d.weighting.epoch_size > 0 ? d.weighting.epoch_size : d.num_samples;
}

// "epoch E of N samples": what a planner error names.
static std::string EpochName(const PlanRequest& q, const PlanDerived& d) {
  return "epoch " + std::to_string(q.epoch) + " of " + std::to_string(EpochSamples(d)) + " samples";
}

// Runs a planner entry point, turning std::bad_alloc (memory the estimates
// did not foresee, or that another part of the process took) into an error
// that says what was being planned.
template <typename Fn>
static auto OutOfMemoryAsError(const std::string& what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    const Status st = StatusFromException(std::current_exception(), what);
    return Status(st.code(), st.message() +
                                 "; spread the epoch over more ranks or workers, or plan it in windows "
                                 "(PlanWorkerWindows)");
  }
}

static int64_t WorkerShare(const PlanDerived& derived) {
  const World& w = derived.parallel_world;
  const __int128 ranks = __int128{w.num_nodes} * w.ranks_per_node;
  const __int128 per_rank = (EpochSamples(derived) + ranks - 1) / std::max<__int128>(ranks, 1);
  const __int128 per_worker = (per_rank + w.workers_per_rank - 1) / std::max<int64_t>(w.workers_per_rank, 1);
  return int64_t(std::min<__int128>(per_worker, INT64_MAX));
}

Result<int64_t> WorkerPlanSize(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  return WorkerShare(derived);
}

// Whether the plan of `workers` workers (PlanWorkers) fits this process's
// memory, checked before it is made: py1e and py1s hold each worker's slots
// (8 bytes, 4 more for their index by canonical node); the other shuffles
// also the epoch's whole permutation; the other batching methods the whole
// epoch's array (the array, its rows and the permutation).
static Status CheckWorkersMemory(const PlanRequest& q, const PlanDerived& d, int64_t workers, const std::string& who) {
  const PlanConfig& c = q.config;
  if (c.mixture) return Status::Ok();  // its own bound: the streams' passes
  const uint64_t limit = ProcessMemoryLimit();
  const int64_t own = WorkerShare(d);
  const int64_t slots = own > INT64_MAX / std::max<int64_t>(workers, 1) ? INT64_MAX : own * workers;
  const std::string what = "the plan of " + who + " in " + EpochName(q, d);
  if (c.batching_method != BatchingMethod::kRandom) {
    return CheckPlanMemory(what, "sample", EpochSamples(d), 24, limit,
                           std::string("batching method '") + std::string(BatchingMethodName(c.batching_method)) +
                               "' plans the whole epoch in every worker: use random batching for an epoch this size");
  }
  if (!c.shuffle || c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s) {
    return CheckPlanMemory(what, "sample", slots, 12, limit,
                           "spread the epoch over more ranks or DataLoader workers (each plans only its share), "
                           "or plan it in windows (PlanWorkerWindows; `sluice plan` does)");
  }
  const int64_t held = EpochSamples(d) > INT64_MAX - slots ? INT64_MAX : EpochSamples(d) + slots;
  return CheckPlanMemory(what, "sample", held, 8, limit,
                         "shuffle algorithm '" + std::string(ShuffleAlgoName(c.shuffle_algo)) +
                             "' holds the epoch's whole permutation in every worker: shuffle with py1e or py1s "
                             "(a worker then holds only its share, or plans in windows)");
}

Result<WorkArray> PlanEpoch(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  if (!request.config.mixture) {
    SLUICE_RETURN_IF_ERROR(CheckPlanMemory("the whole plan of " + EpochName(request, derived), "sample",
                                           EpochSamples(derived), 24, ProcessMemoryLimit(),
                                           "plan one worker's share (PlanWorker) or in windows (PlanWorkerWindows)"));
  }
  return OutOfMemoryAsError("planning the whole " + EpochName(request, derived),
                            [&] { return PlanEpochDerived(request, derived); });
}

static Result<WorkArray> PlanEpochDerived(const PlanRequest& request, const PlanDerived& derived) {
  const BatchContext ctx{request, derived};
  if (request.config.mixture) return MixtureEpoch(ctx);
  switch (request.config.batching_method) {
    case BatchingMethod::kRandom: return BatchRandom(ctx);
    case BatchingMethod::kPerStream: return BatchPerStream(ctx);
    case BatchingMethod::kStratified: return BatchStratified(ctx);
    case BatchingMethod::kDevicePerStream: return BatchDevicePerStream(ctx);
  }
  return InternalError("unknown batching method");
}

// A real worker's planning worker: its rank mapped onto the planning rank
// of its replication group.
static Result<PlanningWorker> PlanningWorkerOf(const World& w, const PlanDerived& derived, const WorkerAt& at) {
  if (at.node < 0 || at.node >= w.num_nodes || at.rank < 0 || at.rank >= w.ranks_per_node || at.worker < 0 ||
      at.worker >= w.workers_per_rank) {
    return InvalidArgumentError("worker (node " + std::to_string(at.node) + ", rank " + std::to_string(at.rank) +
                                ", worker " + std::to_string(at.worker) + ") is outside the world of " +
                                std::to_string(w.num_nodes) + " x " + std::to_string(w.ranks_per_node) + " x " +
                                std::to_string(w.workers_per_rank));
  }
  const int64_t g = (at.node * w.ranks_per_node + at.rank) / derived.replication;
  const int64_t pr = derived.parallel_world.ranks_per_node;
  return PlanningWorker{g / pr, g % pr, at.worker};
}

static Result<std::vector<std::vector<int64_t>>> PlanningWorkersNarrow(const PlanRequest& request,
                                                                       const PlanDerived& derived,
                                                                       const std::vector<PlanningWorker>& planning,
                                                                       const EpochCheckpoints* checkpoints,
                                                                       bool* narrow, int64_t head,
                                                                       const std::atomic<bool>* cancel);

// PlanWorkers, setting *narrow (when given) as PlanWorker's warning is decided.
// With head >= 0 (one worker, random batching only): its first `head` ids.
static Result<std::vector<std::vector<int64_t>>> PlanWorkersNarrow(const PlanRequest& request,
                                                                   std::span<const WorkerAt> workers,
                                                                   const EpochCheckpoints* checkpoints, bool* narrow,
                                                                   int64_t head = -1,
                                                                   const std::atomic<bool>* cancel = nullptr) {
  SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
  const World& w = request.world;
  std::vector<PlanningWorker> planning;
  for (const WorkerAt& at : workers) {
    SLUICE_ASSIGN_OR_RETURN(PlanningWorker p, PlanningWorkerOf(w, derived, at));
    planning.push_back(p);
  }
  std::string who = workers.size() == 1 ? "worker (node " + std::to_string(workers[0].node) + ", rank " +
                                              std::to_string(workers[0].rank) + ", worker " +
                                              std::to_string(workers[0].worker) + ")"
                                        : std::to_string(workers.size()) + " workers";
  if (head < 0) SLUICE_RETURN_IF_ERROR(CheckWorkersMemory(request, derived, int64_t(workers.size()), who));
  return OutOfMemoryAsError("planning " + who + " in " + EpochName(request, derived), [&] {
    return PlanningWorkersNarrow(request, derived, planning, checkpoints, narrow, head, cancel);
  });
}

static Result<std::vector<std::vector<int64_t>>> PlanningWorkersNarrow(const PlanRequest& request,
                                                                       const PlanDerived& derived,
                                                                       const std::vector<PlanningWorker>& planning,
                                                                       const EpochCheckpoints* checkpoints,
                                                                       bool* narrow, int64_t head,
                                                                       const std::atomic<bool>* cancel) {
  const BatchContext ctx{request, derived};
  std::vector<std::vector<int64_t>> each;
  if (request.config.mixture) {
    for (const PlanningWorker& p : planning) {
      SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
      SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, MixtureWorker(ctx, p.pnode, p.prank, p.worker));
      each.push_back(std::move(ids));
    }
    return each;  // MixtureWorker leaves no padding
  } else if (request.config.batching_method == BatchingMethod::kRandom) {
    SLUICE_ASSIGN_OR_RETURN(each, WorkersRandom(ctx, planning, narrow, checkpoints, head, cancel));
  } else {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    SLUICE_ASSIGN_OR_RETURN(WorkArray work, PlanEpoch(request));
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    for (const PlanningWorker& p : planning) {
      const int64_t* begin = work.ids.data() + work.Offset(p.pnode, p.prank, p.worker, 0, 0);
      each.emplace_back(begin, begin + work.batches() * work.batch_size());
    }
  }
  for (std::vector<int64_t>& slice : each) std::erase(slice, -1);
  return each;
}

Result<std::vector<std::vector<int64_t>>> PlanWorkers(const PlanRequest& request, std::span<const WorkerAt> workers,
                                                      const EpochCheckpoints* checkpoints) {
  return PlanWorkersNarrow(request, workers, checkpoints, nullptr);
}

Result<std::vector<int64_t>> PlanWorker(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                                        std::optional<std::string>* shuffle_warning,
                                        const EpochCheckpoints* checkpoints, const std::atomic<bool>* cancel) {
  if (shuffle_warning != nullptr) shuffle_warning->reset();
  const WorkerAt one{node, rank, worker};
  bool narrow = false;
  SLUICE_ASSIGN_OR_RETURN(auto each, PlanWorkersNarrow(request, std::span<const WorkerAt>(&one, 1), checkpoints, &narrow,
                                                       -1, cancel));
  if (narrow && shuffle_warning != nullptr) *shuffle_warning = kPy1eNarrowBlock;
  return std::move(each[0]);
}

Result<bool> PlanWorkerWindows(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                               int64_t window, const PlanWindowSink& sink,
                               std::optional<std::string>* shuffle_warning, const std::atomic<bool>* cancel,
                               const EpochCheckpoints* checkpoints) {
  if (shuffle_warning != nullptr) shuffle_warning->reset();
  if (window < 1) return InvalidArgumentError("a plan's window must hold at least one id, not " + std::to_string(window));
  const PlanConfig& c = request.config;
  if (!c.mixture && c.batching_method == BatchingMethod::kRandom) {
    SLUICE_ASSIGN_OR_RETURN(PlanDerived derived, DerivePlan(request));
    SLUICE_ASSIGN_OR_RETURN(PlanningWorker p, PlanningWorkerOf(request.world, derived, WorkerAt{node, rank, worker}));
    const BatchContext ctx{request, derived};
    bool narrow = false;
    SLUICE_ASSIGN_OR_RETURN(
        bool windowed,
        OutOfMemoryAsError("planning worker (node " + std::to_string(node) + ", rank " + std::to_string(rank) +
                               ", worker " + std::to_string(worker) + ") in windows in " + EpochName(request, derived),
                           [&] {
                             return WorkerRandomWindows(ctx, p, window, sink,
                                                        shuffle_warning != nullptr ? &narrow : nullptr, cancel,
                                                        checkpoints);
                           }));
    if (windowed) {
      if (narrow && shuffle_warning != nullptr) *shuffle_warning = kPy1eNarrowBlock;
      return true;
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, PlanWorker(request, node, rank, worker, shuffle_warning,
                                                               checkpoints, cancel));
  for (size_t at = 0; at < ids.size(); at += size_t(window)) {
    SLUICE_RETURN_IF_ERROR(CheckPlanCancelled(cancel));
    const size_t n = std::min(ids.size() - at, size_t(window));
    SLUICE_RETURN_IF_ERROR(sink(std::span<const int64_t>(ids.data() + at, n)));
  }
  return false;
}

Result<WorkerHead> PlanWorkerHead(const PlanRequest& request, int64_t node, int64_t rank, int64_t worker,
                                  int64_t count, std::optional<std::string>* shuffle_warning,
                                  const EpochCheckpoints* checkpoints) {
  const PlanConfig& c = request.config;
  const bool by_head = !c.mixture && c.batching_method == BatchingMethod::kRandom &&
                       (!c.shuffle || c.shuffle_algo == ShuffleAlgo::kPy1e || c.shuffle_algo == ShuffleAlgo::kPy1s);
  WorkerHead head;
  if (!by_head) {
    SLUICE_ASSIGN_OR_RETURN(head.ids, PlanWorker(request, node, rank, worker, shuffle_warning, checkpoints));
    head.whole = true;
    return head;
  }
  if (shuffle_warning != nullptr) shuffle_warning->reset();
  const WorkerAt one{node, rank, worker};
  bool narrow = false;
  SLUICE_ASSIGN_OR_RETURN(auto each, PlanWorkersNarrow(request, std::span<const WorkerAt>(&one, 1), checkpoints,
                                                       shuffle_warning != nullptr ? &narrow : nullptr,
                                                       std::max<int64_t>(count, 0)));
  if (narrow && shuffle_warning != nullptr) *shuffle_warning = kPy1eNarrowBlock;
  head.ids = std::move(each[0]);
  head.whole = int64_t(head.ids.size()) < count;  // the plan ended within the head
  return head;
}

std::vector<std::vector<int64_t>> DataLoaderBatches(const std::vector<std::vector<int64_t>>& worker_ids,
                                                    int64_t batch_size) {
  const size_t B = static_cast<size_t>(std::max<int64_t>(batch_size, 1));
  std::vector<std::vector<int64_t>> out;
  for (size_t round = 0;; ++round) {
    bool any = false;
    for (const std::vector<int64_t>& ids : worker_ids) {
      const size_t begin = round * B;
      if (begin < ids.size()) {
        out.emplace_back(ids.begin() + static_cast<ptrdiff_t>(begin),
                         ids.begin() + static_cast<ptrdiff_t>(std::min(ids.size(), begin + B)));
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

std::vector<std::vector<int64_t>> DataLoaderBatches(const WorkArray& work, int64_t node, int64_t rank) {
  std::vector<std::vector<int64_t>> worker_ids(static_cast<size_t>(work.workers()));
  for (int64_t w = 0; w < work.workers(); ++w) {
    const int64_t* begin = work.ids.data() + work.Offset(node, rank, w, 0, 0);
    std::vector<int64_t>& ids = worker_ids[static_cast<size_t>(w)];
    ids.assign(begin, begin + work.batches() * work.batch_size());
    std::erase(ids, -1);
  }
  return DataLoaderBatches(worker_ids, work.batch_size());
}

}  // namespace sluice::planner

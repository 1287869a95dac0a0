#include "engine/planner/partition.h"

#include <cstdint>
#include <string>
#include <utility>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/partition_orig.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {
namespace {

// The orig arguments of a relaxed re-layout (global batch kept, split over the
// initial node count).
Result<PartitionArgs> RelaxedInitialArgs(const PartitionArgs& a) {
  const int64_t P0 = *a.initial_physical_nodes;
  const int64_t G = a.num_physical_nodes * a.ranks_per_node * a.batch_size;
  const __int128 wide = __int128{P0} * a.ranks_per_node;
  const int64_t devices = wide > G ? G + 1 : int64_t(wide);  // > G never divides G
  if (wide > G || G % devices != 0) {
    return MosaicValueError("A global batch size of " + std::to_string(G) +
                            " is not evenly divisible by the initial total number of devices of " +
                            (wide > INT64_MAX ? std::to_string(P0) + " x " + std::to_string(a.ranks_per_node)
                                              : std::to_string(int64_t(wide))) +
                            ". Make sure that when using the `relaxed` partitioning algorithm, the global "
                            "batch size does not change during resumption of training.");
  }
  PartitionArgs o = a;
  o.num_physical_nodes = P0;
  o.batch_size = G / devices;
  o.initial_physical_nodes.reset();
  return o;
}

Status CheckCommon(const PartitionArgs& a) {
  SLUICE_RETURN_IF_ERROR(CheckPartitionArgs(a));
  return CheckResume(a);
}

// Position of new element (p, r, s) of a global batch row in the initial layout.
struct Relayout {
  int64_t R, B, B0;
  void Map(int64_t p, int64_t r, int64_t s, int64_t& p0, int64_t& r0, int64_t& s0) const {
    const int64_t g = (p * R + r) * B + s;
    p0 = g / (R * B0);
    r0 = (g / B0) % R;
    s0 = g % B0;
  }
};

}  // namespace

// relaxed falls back to orig unless resuming onto a node count that neither
// divides nor is divided by the canonical node count.
bool RelaxedIsOrig(const PartitionArgs& a) {
  return !a.initial_physical_nodes || a.num_canonical_nodes % a.num_physical_nodes == 0 ||
         a.num_physical_nodes % a.num_canonical_nodes == 0;
}

Result<PartitionAlgo> ParsePartitionAlgo(std::string_view name) {
  if (name == "orig") return PartitionAlgo::kOrig;
  if (name == "relaxed") return PartitionAlgo::kRelaxed;
  return MosaicKeyError(name);
}

std::string_view PartitionAlgoName(PartitionAlgo algo) {
  return algo == PartitionAlgo::kOrig ? "orig" : "relaxed";
}

Result<WorkArray> GetPartitions(PartitionAlgo algo, const PartitionArgs& a) {
  SLUICE_RETURN_IF_ERROR(CheckCommon(a));
  if (algo == PartitionAlgo::kOrig || RelaxedIsOrig(a)) {
    SLUICE_ASSIGN_OR_RETURN(OrigLayout layout, OrigLayout::Make(a));
    WorkArray work;
    work.shape = layout.shape();
    work.ids.resize(static_cast<size_t>(work.shape[0] * work.shape[1] * work.shape[2] *
                                        work.shape[3] * work.shape[4]));
    for (int64_t p = 0; p < work.shape[0]; ++p)
      for (int64_t r = 0; r < work.shape[1]; ++r) layout.FillRank(p, r, work);
    return work;
  }
  SLUICE_ASSIGN_OR_RETURN(PartitionArgs a0, RelaxedInitialArgs(a));
  SLUICE_ASSIGN_OR_RETURN(WorkArray x0, GetPartitions(PartitionAlgo::kOrig, a0));
  WorkArray work;
  work.shape = {a.num_physical_nodes, a.ranks_per_node, x0.workers(), x0.batches(), a.batch_size};
  work.ids.resize(x0.ids.size());
  const Relayout map{a.ranks_per_node, a.batch_size, a0.batch_size};
  for (int64_t p = 0; p < work.shape[0]; ++p)
    for (int64_t r = 0; r < work.shape[1]; ++r)
      for (int64_t s = 0; s < work.shape[4]; ++s) {
        int64_t p0, r0, s0;
        map.Map(p, r, s, p0, r0, s0);
        for (int64_t w = 0; w < work.shape[2]; ++w)
          for (int64_t b = 0; b < work.shape[3]; ++b) work.At(p, r, w, b, s) = x0.At(p0, r0, w, b, s0);
      }
  return work;
}

WorkerSlots::WorkerSlots(PartitionArgs args, bool relaxed, int64_t node, int64_t rank,
                         int64_t worker, std::shared_ptr<const OrigLayout> layout)
    : args_(std::move(args)),
      relaxed_(relaxed),
      node_(node),
      rank_(rank),
      worker_(worker),
      layout_(std::move(layout)) {
  const auto shape0 = layout_->shape();
  W_ = shape0[2];
  batches_ = shape0[3];
  B0_ = shape0[4];
}

Result<WorkerSlots> WorkerSlots::Make(PartitionAlgo algo, const PartitionArgs& a, int64_t node, int64_t rank,
                                      int64_t worker) {
  SLUICE_RETURN_IF_ERROR(CheckCommon(a));
  if (node < 0 || node >= a.num_physical_nodes || rank < 0 || rank >= a.ranks_per_node || worker < 0 ||
      worker >= a.workers_per_rank) {
    return InvalidArgumentError("worker (node " + std::to_string(node) + ", rank " + std::to_string(rank) +
                                ", worker " + std::to_string(worker) + ") outside the world");
  }
  const bool relaxed = algo == PartitionAlgo::kRelaxed && !RelaxedIsOrig(a);
  PartitionArgs a0 = a;
  if (relaxed) {
    SLUICE_ASSIGN_OR_RETURN(a0, RelaxedInitialArgs(a));
  }
  SLUICE_ASSIGN_OR_RETURN(OrigLayout layout, OrigLayout::Make(a0));
  return WorkerSlots(a, relaxed, node, rank, worker, std::make_shared<const OrigLayout>(std::move(layout)));
}

void WorkerSlots::Fill(int64_t b0, int64_t b1, int64_t* out) const {
  const int64_t B = args_.batch_size;
  const Relayout map{args_.ranks_per_node, B, B0_};
  for (int64_t b = b0; b < b1; ++b, out += B) {
    if (!relaxed_) {  // each batch is a run of the rank's list
      layout_->RankRun(node_, rank_, b * W_ * B0_ + worker_ * B0_, B, out);
      continue;
    }
    for (int64_t s = 0; s < B; ++s) {
      int64_t p0 = node_, r0 = rank_, s0 = s;
      map.Map(node_, rank_, s, p0, r0, s0);
      const int64_t q = b * W_ * B0_ + worker_ * B0_ + s0;  // position in rank list
      out[s] = q < layout_->rank_len() ? layout_->RankElem(p0, r0, q) : -1;
    }
  }
}

Result<std::vector<int64_t>> GetWorkerPartition(PartitionAlgo algo, const PartitionArgs& a, int64_t node,
                                                int64_t rank, int64_t worker, int64_t head) {
  SLUICE_ASSIGN_OR_RETURN(WorkerSlots slots, WorkerSlots::Make(algo, a, node, rank, worker));
  const int64_t NB = slots.batches(), B = a.batch_size;
  std::vector<int64_t> out(static_cast<size_t>(head >= 0 ? 0 : NB * B));
  if (head < 0) {
    slots.Fill(0, NB, out.data());
    return out;
  }
  int64_t kept = 0;  // non-padding slots so far
  for (int64_t b = 0; b < NB && kept < head; ++b) {
    out.resize(static_cast<size_t>((b + 1) * B));
    slots.Fill(b, b + 1, out.data() + b * B);
    for (int64_t s = 0; s < B; ++s) kept += out[static_cast<size_t>(b * B + s)] >= 0;
  }
  return out;
}

}  // namespace sluice::planner

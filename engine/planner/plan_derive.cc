// Resolving Mosaic's defaults, replication and stream weights (README 3.2, 3.3, 3.9).
#include <algorithm>
#include <string>

#include "engine/planner/mixture_plan.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/plan.h"
#include "engine/planner/size_check.h"

namespace sluice::planner {

Result<BatchingMethod> ParseBatchingMethod(std::string_view name) {
  if (name == "random") return BatchingMethod::kRandom;
  if (name == "per_stream") return BatchingMethod::kPerStream;
  if (name == "stratified") return BatchingMethod::kStratified;
  if (name == "device_per_stream") return BatchingMethod::kDevicePerStream;
  return MosaicValueError("Invalid batching method: " + std::string(name) +
                          ". Must be one of `random`, `per_stream`, `stratified`, `device_per_stream`.");
}

Result<SamplingMethod> ParseSamplingMethod(std::string_view name) {
  if (name == "balanced") return SamplingMethod::kBalanced;
  if (name == "fixed") return SamplingMethod::kFixed;
  return MosaicValueError("Invalid sampling method: " + std::string(name) + ". Must be one of `balanced` or `fixed`.");
}

std::string_view BatchingMethodName(BatchingMethod method) {
  switch (method) {
    case BatchingMethod::kRandom: return "random";
    case BatchingMethod::kPerStream: return "per_stream";
    case BatchingMethod::kStratified: return "stratified";
    case BatchingMethod::kDevicePerStream: return "device_per_stream";
  }
  return "?";
}

std::string_view SamplingMethodName(SamplingMethod method) {
  return method == SamplingMethod::kBalanced ? "balanced" : "fixed";
}

int64_t DefaultCanonicalNodes(ShuffleAlgo algo, int64_t physical_nodes) {
  const bool many = algo == ShuffleAlgo::kPy1s || algo == ShuffleAlgo::kPy2s;
  return many ? 64 * physical_nodes : physical_nodes;
}

Result<PlanDerived> DerivePlan(const PlanRequest& q) {
  const PlanConfig& c = q.config;
  const World& w = q.world;
  auto positive = [](int64_t v, const char* name) -> Status {
    if (v <= 0) return MosaicValueError(std::string(name) + " must be positive, got " + std::to_string(v));
    return Status::Ok();
  };
  SLUICE_RETURN_IF_ERROR(positive(w.num_nodes, "num_nodes"));
  SLUICE_RETURN_IF_ERROR(positive(w.ranks_per_node, "ranks_per_node"));
  SLUICE_RETURN_IF_ERROR(positive(w.workers_per_rank, "workers_per_rank"));
  SLUICE_RETURN_IF_ERROR(CheckProduct({w.num_nodes, w.ranks_per_node, w.workers_per_rank}));
  if (!c.batch_size) return MosaicValueError("batch_size must be provided to plan an epoch");
  SLUICE_RETURN_IF_ERROR(positive(*c.batch_size, "batch_size"));
  SLUICE_RETURN_IF_ERROR(positive(c.sampling_granularity, "sampling_granularity"));
  if (q.epoch < 0) return MosaicValueError("epoch must be non-negative, got " + std::to_string(q.epoch));
  if (q.sample_in_epoch < 0)
    return MosaicValueError("sample_in_epoch must be non-negative, got " + std::to_string(q.sample_in_epoch));
  if (q.streams.empty()) return MosaicValueError("at least one stream is required");

  PlanDerived d;
  // Replication: merge each group of k consecutive ranks into one planning rank.
  d.parallel_world = World{w.num_nodes, w.ranks_per_node, w.workers_per_rank, {}, {}, {}};
  if (c.replication) {
    const int64_t k = *c.replication;
    SLUICE_RETURN_IF_ERROR(positive(k, "replication"));
    const int64_t ranks = w.num_nodes * w.ranks_per_node;
    if (ranks % k != 0) {
      return MosaicValueError("World size " + std::to_string(ranks) + " is not divisible by replication " +
                              std::to_string(k));
    }
    const int64_t rp = ranks / k;
    const int64_t P = rp % w.ranks_per_node == 0 ? rp / w.ranks_per_node : 1;
    d.parallel_world.num_nodes = P;
    d.parallel_world.ranks_per_node = rp / P;
    d.replication = k;
  }
  // Streams: global ids are positions in the concatenation of all shards.
  std::vector<int64_t> per_stream;
  for (const StreamSpec& s : q.streams) {
    d.stream_first_id.push_back(d.num_samples);
    int64_t n = 0;
    for (int64_t z : s.shard_sizes) {
      if (z < 0) return MosaicValueError("negative shard size " + std::to_string(z));
      n += z;
      SLUICE_RETURN_IF_ERROR(CheckProduct({d.num_samples + n}));
    }
    per_stream.push_back(n);
    d.num_samples += n;
  }
  if (d.num_samples == 0) return MosaicValueError("the dataset has no samples");
  for (size_t i = 0; i < per_stream.size(); ++i)
    if (per_stream[i] == 0) return MosaicValueError("stream " + std::to_string(i) + " has no samples");
  if (c.mixture) {
    // The schedule decides each stream's share; the first point's is
    // reported as its proportion.
    // (Its past schedules are checked here too, so a resume refuses them.)
    SLUICE_ASSIGN_OR_RETURN(std::vector<MixturePhase> phases, MixtureRequestPhases(q));
    d.weighting.epoch_size = *c.epoch_size;
    for (int64_t share : phases.back().mixture.share[0]) {
      d.weighting.streams.push_back({double(share) / double(kMixtureScale), 0, 0});
    }
  } else {
    std::vector<StreamWeight> weights;
    for (const StreamSpec& s : q.streams) weights.push_back(s.weight);
    SLUICE_ASSIGN_OR_RETURN(d.weighting, ApplyWeights(weights, per_stream, c.epoch_size, c.shuffle_seed));
  }
  SLUICE_RETURN_IF_ERROR(CheckProduct({d.weighting.epoch_size}));
  if (d.weighting.epoch_size <= 0) return MosaicValueError("the epoch has no samples");

  const int64_t P = d.parallel_world.num_nodes;
  if (c.num_canonical_nodes) {
    SLUICE_RETURN_IF_ERROR(positive(*c.num_canonical_nodes, "num_canonical_nodes"));
    d.num_canonical_nodes = *c.num_canonical_nodes;
  } else {
    d.num_canonical_nodes = DefaultCanonicalNodes(c.shuffle_algo, P);
  }
  if (c.shuffle_block_size) {
    SLUICE_RETURN_IF_ERROR(positive(*c.shuffle_block_size, "shuffle_block_size"));
    d.shuffle_block_size = *c.shuffle_block_size;
  } else {
    d.shuffle_block_size = std::max<int64_t>(4000000 / d.num_canonical_nodes, int64_t{1} << 18);
  }
  if (c.initial_physical_nodes) SLUICE_RETURN_IF_ERROR(positive(*c.initial_physical_nodes, "initial_physical_nodes"));
  d.epoch_seed_change = c.shuffle && c.sampling_method == SamplingMethod::kBalanced;
  return d;
}

}  // namespace sluice::planner

// JSON in and out of the planner, for `sluice plan FILE` and tests.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/planner/plan.h"

namespace sluice::planner {

// Parses a JSON object shaped like the "config" object of
// tests/data/mosaic/order/configs/*.json (a whole such file is accepted too:
// its "config" member is used). Keys: streams [{shard_sizes, proportion |
// repeat | choose}], epoch_size (null, int or "1.5k"-style string), world
// {num_nodes, ranks_per_node, workers_per_rank[, node, rank, worker]},
// replication, batch_size, shuffle, shuffle_algo, shuffle_seed,
// shuffle_block_size, num_canonical_nodes, partition_algo, batching_method,
// sampling_method, sampling_granularity, epoch, sample_in_epoch,
// initial_physical_nodes, mixture ([[samples seen, [weights]], ...]) and
// mixture_interpolation ("step" | "linear"), mixture_rule ("tijdeman" |
// "deficit", MixtureRule; default "tijdeman"), mixture_past ([{"epoch", "until",
// "mixture", "mixture_interpolation"}, ...]: PlanConfig::mixture_past, as a
// state's order record holds it). Missing keys take Mosaic's defaults; "name" and
// "dataloader_check" are ignored. Errors: malformed JSON or wrong types
// (kInvalidArgument, "ValueError: ..."), unknown algorithm names (Mosaic's type).
Result<PlanRequest> ParsePlanRequest(std::string_view json);

// {"work":[...5-D...],"work_shape":[P,R,W,batches,B]}: compact, keys in the
// order and format the order/configs files hold them.
std::string RenderWork(const WorkArray& work);

// {"error":{"message":"...","type":"ValueError"}} for a planner error.
std::string RenderError(const Status& status);

// The whole of `sluice plan FILE`: ParsePlanRequest + PlanEpoch + RenderWork,
// or RenderError when Mosaic (or the parser) rejects the configuration.
// Never throws; the returned text is one JSON object.
std::string PlanToJson(std::string_view config_json);

}  // namespace sluice::planner

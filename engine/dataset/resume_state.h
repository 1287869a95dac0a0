// Mosaic's StreamingDataset.state_dict fields, as JSON text, and beside
// them Sluice's record of what else defines the order (order_record.h).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/dataset/order_record.h"
#include "engine/dataset/skip_ranges.h"

namespace sluice {

struct ResumeState {
  int64_t epoch = 0;
  int64_t sample_in_epoch = 0;  // samples consumed by all ranks this epoch
  int64_t num_canonical_nodes = 0;
  uint64_t shuffle_seed = 0;
  int64_t initial_physical_nodes = 0;
  // "sluice_order"; unset in states saved by Mosaic or an older Sluice.
  std::optional<OrderRecord> order;
};

// {"epoch": E, "sample_in_epoch": S, "num_canonical_nodes": C,
//  "shuffle_seed": X, "initial_physical_nodes": P} (this key order), then
// "sluice_order" when the state has one.
std::string ResumeStateToJson(const ResumeState& state);

// Parses the same object (key order free; unknown keys ignored, as Mosaic's
// load_state_dict reads only these; "initial_physical_nodes" may be absent
// or null for states of older Mosaic versions -> 0 = none; "sluice_order"
// absent or null -> none). Missing or negative required fields, or a
// "sluice_order" ParseOrderRecord refuses -> kInvalidArgument naming the field.
Result<ResumeState> ResumeStateFromJson(std::string_view json);

// How a resume treats its state, beyond Mosaic's rules.
struct ResumeOptions {
  // Parts of the state's order record allowed to differ (ParseAdaptParts).
  std::vector<std::string> adapt;
  // Steps, or samples (whole steps), of the state's epoch to skip
  // (skip_ranges.h).
  StepRanges skip_steps, skip_samples;
  // Global sample ids whose steps (ahead of the state, on the resuming
  // world) to skip: every sample of such a step goes with it.
  std::vector<int64_t> skip_sample_ids;
  // (batch_size, ranks) of the world whose steps the state's skip ranges
  // are, when not this one's: an elastic packed resume plans the shape the
  // epoch started on (StreamingDataset::ShapeWorkerIds), whose steps they
  // are. None: this world's. No skips may be added then.
  std::optional<std::pair<int64_t, int64_t>> steps_of = std::nullopt;
};

// {"adapt": ["world", ...], "skip_steps": [[first, last], ...],
//  "skip_samples": [[first, last], ...], "skip_sample_ids": [id, ...]},
// each key optional (null = none).
// Unknown keys or wrong types -> kInvalidArgument naming the key.
Result<ResumeOptions> ResumeOptionsFromJson(std::string_view json);

}  // namespace sluice

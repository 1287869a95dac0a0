// Mosaic's StreamingDataset.state_dict fields, as JSON text.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct ResumeState {
  int64_t epoch = 0;
  int64_t sample_in_epoch = 0;  // samples consumed by all ranks this epoch
  int64_t num_canonical_nodes = 0;
  uint64_t shuffle_seed = 0;
  int64_t initial_physical_nodes = 0;
};

// {"epoch": E, "sample_in_epoch": S, "num_canonical_nodes": C,
//  "shuffle_seed": X, "initial_physical_nodes": P} (this key order).
std::string ResumeStateToJson(const ResumeState& state);

// Parses the same object (key order free; unknown keys ignored, as Mosaic's
// load_state_dict reads only these; "initial_physical_nodes" may be absent
// or null for states of older Mosaic versions -> 0 = none). Missing or
// negative required fields -> kInvalidArgument naming the field.
Result<ResumeState> ResumeStateFromJson(std::string_view json);

}  // namespace sluice

// sluice_world_from_env / sluice_world_resolve / sluice_world_env_warning: the
// engine's reading of torchrun's variables, or of a world given
// (engine/dataset ResolveWorld), so that no binding reads them, or decides
// what to warn of, its own way.
#include "bindings/c/c_api_internal.h"
#include "engine/dataset/dataset_config.h"

extern "C" {

sluice_status sluice_world_from_env(int64_t* num_nodes, int64_t* ranks_per_node, int64_t* rank) {
  return sluice::capi::Guard("sluice_world_from_env", [&] {
    if (num_nodes == nullptr) {
      return sluice::capi::NullArgument("sluice_world_from_env", "num_nodes");
    }
    if (ranks_per_node == nullptr) {
      return sluice::capi::NullArgument("sluice_world_from_env", "ranks_per_node");
    }
    if (rank == nullptr) return sluice::capi::NullArgument("sluice_world_from_env", "rank");
    auto world = sluice::ResolveWorld({});
    if (!world.ok()) return sluice::capi::Fail(world.status());
    *num_nodes = world->num_nodes;
    *ranks_per_node = world->ranks_per_node;
    *rank = world->global_rank;
    return SLUICE_OK;
  });
}

sluice_status sluice_world_resolve(const char* world_json, int64_t* num_nodes,
                                   int64_t* ranks_per_node, int64_t* rank) {
  return sluice::capi::Guard("sluice_world_resolve", [&] {
    if (num_nodes == nullptr) {
      return sluice::capi::NullArgument("sluice_world_resolve", "num_nodes");
    }
    if (ranks_per_node == nullptr) {
      return sluice::capi::NullArgument("sluice_world_resolve", "ranks_per_node");
    }
    if (rank == nullptr) return sluice::capi::NullArgument("sluice_world_resolve", "rank");
    auto given = sluice::ParseWorldOptions(world_json != nullptr ? world_json : "{}");
    if (!given.ok()) return sluice::capi::Fail(given.status());
    auto world = sluice::ResolveWorld(*given);
    if (!world.ok()) return sluice::capi::Fail(world.status());
    *num_nodes = world->num_nodes;
    *ranks_per_node = world->ranks_per_node;
    *rank = world->global_rank;
    return SLUICE_OK;
  });
}

sluice_status sluice_world_env_warning(char** warning) {
  return sluice::capi::Guard("sluice_world_env_warning", [&] {
    if (warning == nullptr) {
      return sluice::capi::NullArgument("sluice_world_env_warning", "warning");
    }
    *warning = nullptr;
    auto world = sluice::ResolveWorld({});
    if (!world.ok()) return sluice::capi::Fail(world.status());
    if (!world->unranked_warning.empty()) {
      *warning = sluice::capi::CopyOut(world->unranked_warning);
    }
    return SLUICE_OK;
  });
}

}  // extern "C"

// EpochCheckpoints <-> bytes (checkpoints_file.h).
#include "engine/planner/checkpoints_file.h"

#include <xxhash.h>

#include <cstring>

namespace sluice::planner {

using namespace checkpoints_layout;

namespace {

void Put(std::string* out, const void* data, size_t n) { out->append(static_cast<const char*>(data), n); }
template <class T>
void PutValue(std::string* out, const T& v) {
  Put(out, &v, sizeof(v));
}

}  // namespace

Result<uint64_t> CheckpointsKey(const PlanRequest& request) {
  SLUICE_ASSIGN_OR_RETURN(const PlanDerived derived, DerivePlan(request));
  const PlanConfig& c = request.config;
  std::string recipe = "sluice epoch checkpoints 1";
  PutValue(&recipe, int64_t(request.streams.size()));
  for (size_t s = 0; s < request.streams.size(); ++s) {
    const StreamSpec& spec = request.streams[s];
    PutValue(&recipe, int64_t(spec.shard_sizes.size()));
    Put(&recipe, spec.shard_sizes.data(), spec.shard_sizes.size() * sizeof(int64_t));
    const DerivedWeight& w = derived.weighting.streams.at(s);
    PutValue(&recipe, w.choose);
    PutValue(&recipe, w.proportion);
    PutValue(&recipe, w.repeat);
  }
  const int64_t scalars[] = {int64_t(c.shuffle),
                             int64_t(c.shuffle_algo),
                             int64_t(c.shuffle_seed),
                             derived.num_canonical_nodes,
                             derived.shuffle_block_size,
                             int64_t(c.batching_method),
                             int64_t(c.sampling_method),
                             c.sampling_granularity,
                             derived.weighting.epoch_size,
                             int64_t(derived.epoch_seed_change),
                             derived.num_samples,
                             int64_t(c.mixture.has_value()),
                             request.epoch};
  Put(&recipe, scalars, sizeof(scalars));
  return XXH3_64bits(recipe.data(), recipe.size());
}

std::string SerializeCheckpoints(const EpochCheckpoints& k, uint64_t key) {
  std::string out(sizeof(CheckpointsHeader), '\0');
  for (const numpy::Pcg64& g : k.node_start) {
    const CheckpointRecord r{uint64_t(g.state()), uint64_t(g.state() >> 64), uint64_t(g.inc()),
                             uint64_t(g.inc() >> 64), g.has_buffered_u32() ? 1u : 0u, g.buffered_u32()};
    PutValue(&out, r);
  }
  CheckpointsHeader h{};
  const std::string_view body[] = {std::string_view(out).substr(sizeof(h))};
  h.head = SealKeyedHead(kKind, key, body);
  h.algo = uint32_t(k.algo);
  h.narrow = k.py1e_narrow_block ? 1 : 0;
  h.seed = k.seed;
  h.epoch = k.epoch;
  h.num_samples = k.num_samples;
  h.num_canonical_nodes = k.num_canonical_nodes;
  h.block = k.block;
  h.node_count = k.node_start.size();
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

Result<EpochCheckpoints> CheckpointsFromBytes(std::string_view bytes, uint64_t key, std::string_view source) {
  const std::string src(source);
  auto corrupt = [&](const std::string& what) { return CorruptError(src + ": " + what); };
  SLUICE_ASSIGN_OR_RETURN(const KeyedFileHead head, ReadKeyedHead(bytes, kKind, key, source));
  CheckpointsHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  SLUICE_RETURN_IF_ERROR(CheckKeyedBody(bytes, head, {{h.node_count, sizeof(CheckpointRecord)}}, source));
  const uint64_t records = h.node_count;  // bounded by the file's size, checked above
  if ((h.algo != uint32_t(ShuffleAlgo::kPy1e) && h.algo != uint32_t(ShuffleAlgo::kPy1s)) || h.narrow > 1 ||
      h.num_canonical_nodes < 1 || uint64_t(h.num_canonical_nodes) != h.node_count || h.num_samples < 0 ||
      h.block < 0) {
    return corrupt("impossible values in its header (algorithm " + std::to_string(h.algo) + ", " +
                   std::to_string(h.num_canonical_nodes) + " canonical nodes, " + std::to_string(h.node_count) +
                   " records)");
  }
  EpochCheckpoints k;
  k.algo = ShuffleAlgo(h.algo);
  k.seed = h.seed;
  k.epoch = h.epoch;
  k.num_samples = h.num_samples;
  k.num_canonical_nodes = h.num_canonical_nodes;
  k.block = h.block;
  k.py1e_narrow_block = h.narrow != 0;
  k.node_start.reserve(records);
  const char* at = bytes.data() + sizeof(h);
  for (uint64_t i = 0; i < records; ++i, at += sizeof(CheckpointRecord)) {
    CheckpointRecord r;
    std::memcpy(&r, at, sizeof(r));
    if (r.has_u32 > 1) return corrupt("canonical node " + std::to_string(i) + "'s generator state is impossible");
    const auto wide = [](uint64_t lo, uint64_t hi) { return (static_cast<unsigned __int128>(hi) << 64) | lo; };
    k.node_start.push_back(
        numpy::Pcg64::FromState(wide(r.state_lo, r.state_hi), wide(r.inc_lo, r.inc_hi), r.has_u32 != 0, r.u32));
  }
  return k;
}

}  // namespace sluice::planner

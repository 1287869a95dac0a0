// An epoch's checkpoints (plan.h's EpochCheckpoints) as bytes, for one
// process of a node to publish them in a file and the others to read them
// (engine/dataset/node_checkpoints.h). Little-endian, in this order:
//
//   CheckpointsHeader              base/binary_file.h's keyed head (magic,
//                                  layout version, header size, the key,
//                                  the checksum), the checkpoints' scalars
//   CheckpointRecord[node_count]   each canonical node's generator state
//
// The checksum (XXH3-64) covers every byte after the header. Reading trusts
// nothing: another process (or a crash, a full disk, another build of
// Sluice) wrote the file, so the magic, the layout version, the size, the
// checksum and every value are checked before checkpoints are handed out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/binary_file.h"
#include "base/status.h"
#include "engine/planner/plan.h"

namespace sluice::planner {

namespace checkpoints_layout {

struct CheckpointsHeader {
  KeyedFileHead head;  // key: CheckpointsKey of the request they were made for
  uint32_t algo;       // ShuffleAlgo
  uint32_t narrow;     // py1e_narrow_block: 0 or 1
  uint64_t seed, epoch;
  int64_t num_samples, num_canonical_nodes, block;
  uint64_t node_count;  // records that follow; == num_canonical_nodes
};
static_assert(sizeof(CheckpointsHeader) == 88);

// Magic "SLUICECK", layout 1 (base/binary_file.h checks the head).
inline constexpr BinaryFileKind kKind{"SLUICECK", 1, sizeof(CheckpointsHeader), "an epoch checkpoints file",
                                      "made for another plan"};

struct CheckpointRecord {
  uint64_t state_lo, state_hi, inc_lo, inc_hi;
  uint32_t has_u32;  // 0 or 1
  uint32_t u32;
};
static_assert(sizeof(CheckpointRecord) == 40);

}  // namespace checkpoints_layout

// What PlanCheckpoints' result depends on, hashed: the streams' shard sizes
// and weights, the shuffle (algorithm, seed, derived canonical nodes and
// block size), the sampling settings, the epoch size and the epoch, under a
// recipe version. Not the world, the batch size, the partition or
// sample_in_epoch: the same checkpoints serve every worker of every world
// (a resume on another number of nodes included). Errors: DerivePlan's.
Result<uint64_t> CheckpointsKey(const PlanRequest& request);

// The file's bytes for `checkpoints`, made for the request whose key is `key`.
std::string SerializeCheckpoints(const EpochCheckpoints& checkpoints, uint64_t key);

// Checkpoints read back from `bytes` (named `source` in errors). A file of
// another magic, layout, size or checksum (binary_file.h's errors), or with
// an impossible value -> kCorrupt "<source>: <what>"; one made for another
// request (its key is not `key`) -> kNotFound "<source>: made for another
// plan (stale)".
Result<EpochCheckpoints> CheckpointsFromBytes(std::string_view bytes, uint64_t key, std::string_view source);

}  // namespace sluice::planner

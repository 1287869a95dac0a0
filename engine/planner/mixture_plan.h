// Internal: the plan of an epoch under a mixture schedule
// (PlanConfig::mixture): the schedule's global sequence of streams, each
// stream's passes in its shuffled order, dealt to workers in global-batch
// order (README.md, "Mixture schedules").
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "engine/planner/batching.h"
#include "engine/planner/mixture_schedule.h"

namespace sluice::planner {

// Checks what a mixture requires of the rest of the request (random
// batching, no per-stream weights, epoch_size) and quantizes the schedule.
// Errors: ValueError "mixture: ...".
Result<QuantizedMixture> CheckMixtureRequest(const PlanRequest& request);

// The order of stream `stream`'s pass `pass` in `epoch`: global sample ids,
// each of the stream's samples once. It is the stream's shuffle (the
// configured algorithm, seed and block size, over min(C, samples) canonical
// nodes, shuffle epoch = epoch + pass * 2^32) read as Mosaic's orig
// partition reads it for one node and one rank: column by column across the
// canonical nodes, without the partition's padding repeats.
Result<std::vector<int64_t>> MixtureStreamPass(const BatchContext& ctx, int64_t stream, int64_t pass);

// Global sample ids of positions [begin, end) of the epoch's sequence.
Result<std::vector<int64_t>> MixtureSequence(const BatchContext& ctx, int64_t begin, int64_t end);

// PlanEpoch and one worker's ids (planning world; -1 padding left out).
Result<WorkArray> MixtureEpoch(const BatchContext& ctx);
Result<std::vector<int64_t>> MixtureWorker(const BatchContext& ctx, int64_t pnode, int64_t prank, int64_t worker);

}  // namespace sluice::planner

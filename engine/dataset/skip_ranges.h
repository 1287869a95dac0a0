// Skipping steps when a run resumes (load_state_dict's skip_steps and
// skip_samples), the same on every rank.
//
// A step is one batch of every rank. With B = batch_size and R = the ranks
// that read distinct samples (world size / replication), the global batch
// is G = B x R and step k of an epoch is its global positions [k G,
// (k + 1) G): every rank's k-th batch of the epoch on this world. Skipping
// a step drops that batch on every rank; every other step keeps its samples
// and their order, so the ranks stay in lockstep and the run continues as
// the uninterrupted run would have, minus the skipped steps. A skip is a
// function of the global order and the step number, never of the rank.
//
// A skip range is kept as positions (SkipRange, order_record.h) so that a
// state saved after it still resumes past it; the ranges still ahead of a
// resume must be whole steps of the world that resumes, and so must the
// resume's position.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "engine/dataset/order_record.h"

namespace sluice {

// Half-open ranges as given: [first, last) steps or samples.
using StepRanges = std::vector<std::pair<int64_t, int64_t>>;

// `steps` of `epoch` as positions (x global_batch). kInvalidArgument for a
// negative bound, an empty or reversed range, or one past 2^48 positions.
Result<std::vector<SkipRange>> SkipRangesFromSteps(int64_t epoch, const StepRanges& steps,
                                                   int64_t global_batch);
// `samples` (positions, sample_in_epoch's unit) of `epoch`: as above, and
// each bound must be a whole step (a multiple of global_batch).
Result<std::vector<SkipRange>> SkipRangesFromSamples(int64_t epoch, const StepRanges& samples,
                                                     int64_t global_batch);

// Sorted by (epoch, begin), overlapping or touching ranges of an epoch merged.
std::vector<SkipRange> MergeSkipRanges(std::vector<SkipRange> ranges);

// True when a range of `epoch` ends after position `start`.
bool SkipsAhead(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start);

// Ok when nothing is skipped after `start` in `epoch`, or `start` and every
// range bound after it are whole steps; else kInvalidArgument saying which.
Status CheckSkipsAhead(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start,
                       int64_t batch_size, int64_t ranks);

// The position reached when the job consumed `consumed` samples of `epoch`
// from position `start`: every skip range it meets is passed over (also one
// it reaches exactly, and one `start` is in). `ranges` merged.
int64_t PositionAfter(const std::vector<SkipRange>& ranges, int64_t epoch, int64_t start,
                      uint64_t consumed);

// One worker's ids when the rank's ids from step `first_step` on are
// `rank_ids` (its plan with one worker: batch j = step first_step + j) and
// the steps of `ranges` (of the same epoch, merged) are skipped: the kept
// batches dealt to `num_workers` workers in turn, as Mosaic deals a rank's
// batches (and a DataLoader takes them back in turn).
// WorkerIdsSkipping over the rank's ids as they come, a piece at a time
// (a pass planned in windows): the same ids in the same order.
class SkipDealer {
 public:
  SkipDealer(std::vector<SkipRange> ranges, int64_t epoch, int64_t first_step, int64_t batch_size,
             int64_t ranks, int64_t worker, int64_t num_workers);
  // Appends to *out the ids this worker keeps of the rank's next ids.
  void Deal(std::span<const int64_t> rank_ids, std::vector<int64_t>* out);

 private:
  std::vector<SkipRange> ranges_;
  int64_t epoch_, step_, batch_, ranks_, worker_, num_workers_;
  int64_t in_batch_ = 0;  // positions of the current step's batch dealt
  bool keep_ = false;     // the current batch is this worker's
  int64_t kept_ = 0;      // batches kept so far (dealt in turn)
};

std::vector<int64_t> WorkerIdsSkipping(const std::vector<int64_t>& rank_ids,
                                       const std::vector<SkipRange>& ranges, int64_t epoch,
                                       int64_t first_step, int64_t batch_size, int64_t ranks,
                                       int64_t worker, int64_t num_workers);

}  // namespace sluice

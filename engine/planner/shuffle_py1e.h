// Internal: py1e one canonical node at a time, so that a single worker's plan
// can shuffle only the nodes it reads and merely advance the generator over
// the others.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/stable_pos_sort.h"

namespace sluice::planner {

// Reusable buffers for Py1ePart (amortises allocation across parts).
struct Py1eScratch {
  std::vector<double> pos;
  std::vector<uint64_t> words;
  int coarse_shift = 0;                // coarse bucket = floor(pos) >> coarse_shift
  std::vector<int64_t> bucket_start;   // Py1eDraw counts, Py1eSort sums
  std::vector<int64_t> cursor;
  std::vector<PosId> sorted;
  std::vector<PosId> tmp;
  StablePosSort sorter;  // level 2 of the sort (stable_pos_sort.h)
};

// Shuffles one part: `spans` in their final order, n = their total size;
// writes n ids to out. Draws from `ep` exactly as Mosaic (span shuffles, then
// per span one integers and z uniforms). Errors: empty part (Mosaic's
// ValueError naming `num_canonical_nodes`, the plan's), lo >= hi.
// Sample `position`'s sort key in py1e: position + uniform(low, low +
// range) drawn from the random `word`, each product and sum rounded on its
// own as numpy does (no FMA: the build sets -ffp-contract=off). The one
// copy of that formula for the whole, streamed and head-first plans.
inline double Py1eKey(int64_t position, double low, double range, uint64_t word) {
  const double unit = static_cast<double>(word >> 11) * (1.0 / 9007199254740992.0);
  const double scaled = range * unit;
  const double span_shift = low + scaled;
  return static_cast<double>(position) + span_shift;
}

// Py1eDraw and Py1eSkipPart set *narrow, when given, if some span's random
// block comes out smaller than the span (Mosaic then leaves that span
// unshuffled and warns); they never clear it.
Status Py1ePart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t* out,
                Py1eScratch& scratch, int64_t num_canonical_nodes);

// The two halves of Py1ePart: the draws (samples shuffled into out, positions
// into scratch.pos and counted into coarse buckets), which must run in part
// order on the one generator, and the sort by position, which is independent
// per part. Py1eSort needs the scratch its Py1eDraw filled.
// Py1eSort may finish only the sorted positions [lo, hi) of the part (a
// resumed or partitioned reader needs no others): the rest of out then holds
// unspecified ids. The default sorts all n.
Status Py1eDraw(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t* out,
                Py1eScratch& scratch, int64_t num_canonical_nodes, bool* narrow = nullptr);
void Py1eSort(int64_t n, int64_t* out, Py1eScratch& scratch, int64_t lo = 0, int64_t hi = INT64_MAX);

// The draws of one span's shuffle (z ids, Fisher-Yates from the end),
// discarded: py1e's and py1s's, replayed wherever a part is drawn over.
inline void SkipSpanShuffle(int64_t z, numpy::Pcg64Stream& bits) {
  if (uint64_t(z) <= (uint64_t{1} << 32)) {
    bits.SkipShuffleU32(size_t(z));
  } else {
    for (int64_t i = z - 1; i > 0; --i) numpy::IntervalFrom(bits, uint64_t(i));
  }
}

// A part of at least this many samples has its shuffles' words made on a
// second thread when a Pcg64Ahead is given (each part restarts its maker).
inline constexpr int64_t kAheadPartMin = int64_t{1} << 17;

// Advances `ep` as Py1ePart would, in O(1) memory (*narrow as Py1eDraw).
// With `ahead`, a long part's shuffle words are made on its thread.
Status Py1eSkipPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep,
                    int64_t num_canonical_nodes, bool* narrow = nullptr, numpy::Pcg64Ahead* ahead = nullptr);

// Py1eSkipPart's second half, after the span shuffles: each span's
// integers (br.lo < br.hi) and uniforms drawn over (*narrow as Py1eDraw).
void Py1eSkipKeys(std::span<const Span> spans, BlockRange br, numpy::Pcg64Stream& bits, bool* narrow);

// Receives sorted ids of one part: ids[0..count) are its sorted positions
// first, first+1, ...; called with increasing `first`.
using Py1eSink = std::function<void(int64_t first, const int64_t* ids, int64_t count)>;

// Py1ePart for a reader that needs only the sorted positions [lo, hi) of
// the part: draws from `ep` exactly as Py1ePart, but holds a sliding window
// of the part instead of all of it. A sample moves less than br.hi / 2 from
// its index, so positions below (next index - that bound) are final and are
// handed to `sink` in order. Every position in [lo, hi) is delivered once
// (others may be too). Memory O(block + largest span); spans far outside
// [lo, hi) are drawn over without being materialized. *narrow as Py1eDraw.
// The window is sorted and handed out every max(block/2, min_chunk) new
// samples (tests lower min_chunk to slide it often).
Status Py1eStreamPart(std::span<const Span> spans, BlockRange br, numpy::Generator& ep, int64_t num_canonical_nodes,
                      int64_t lo, int64_t hi, const Py1eSink& sink, bool* narrow = nullptr,
                      int64_t min_chunk = int64_t{1} << 12);

// Mosaic's error for a canonical node without samples.
Status Py1eEmptyPart(int64_t num_canonical_nodes);

// The [low, high) range of the uniform shift of a span of size z at offset
// `off` in a part of n samples, r its random block (Mosaic's doubles).
struct ShiftRange {
  double low, high;
};
ShiftRange SpanShift(int64_t r, int64_t z, int64_t off, int64_t n);

// A block narrower than its span (r < z) has a negative cutoff, which
// SpanShift clamps to 0: the span is not shuffled, which Mosaic warns of.
inline bool Py1eNarrowBlock(int64_t r, int64_t z) { return r < z; }

}  // namespace sluice::planner

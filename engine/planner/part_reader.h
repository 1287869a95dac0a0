// Internal: one canonical node's sorted ids under py1e or py1s, pulled a
// piece at a time, so that a reader of several canonical nodes at once (a
// worker's slots interleave its nodes' positions) holds only a window of
// each instead of any node whole.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "engine/planner/shuffle_algos.h"

namespace sluice::planner {

class PartReader {
 public:
  virtual ~PartReader() = default;
  // Moves to the next piece: ids() are the part's sorted positions first(),
  // first() + 1, ...; pieces come with increasing first(). False when the
  // part has no more; its draws are then all made (the generator stands at
  // the next part's first draw).
  virtual bool Next() = 0;
  // Where the generator will stand after the part, when the reader can
  // tell without drawing the part again (py1e: its span shuffles are behind
  // it; *narrow as the reader's). False: only by drawing it (py1s).
  virtual bool EndState(numpy::Pcg64* end, bool* narrow) const = 0;
  int64_t first() const { return first_; }
  std::span<const int64_t> ids() const { return ids_; }

 protected:
  int64_t first_ = 0;
  std::span<const int64_t> ids_;
};

// py1e's part (Py1eStreamPart's window: every position in [lo, hi) comes in
// some piece; others may). Draws from `gen`, which must outlive the reader
// and not be used until it is destroyed; sets *narrow (never clears it) as
// Py1eDraw. Errors: Py1eStreamPart's, before any draw.
Result<std::unique_ptr<PartReader>> OpenPy1eReader(std::span<const Span> spans, BlockRange br, numpy::Pcg64& gen,
                                                   int64_t num_canonical_nodes, int64_t lo, int64_t hi, bool* narrow,
                                                   int64_t min_chunk = int64_t{1} << 12);

// py1s's part: each span shuffled in place, in order; spans meeting [lo, hi)
// come as pieces, the others' draws are replayed. `gen` as above.
std::unique_ptr<PartReader> OpenPy1sReader(std::span<const Span> spans, numpy::Pcg64& gen, int64_t lo, int64_t hi);

}  // namespace sluice::planner

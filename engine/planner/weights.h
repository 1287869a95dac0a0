// Mosaic's Stream.apply_weights: each stream's samples per epoch from its
// proportion / repeat / choose and the dataset's epoch_size. Spec: README
// section 3.3 (and 2.5 for numpy's pairwise sum). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::planner {

// What the user gave a stream: at most one of the three.
struct StreamWeight {
  std::optional<double> proportion;
  std::optional<double> repeat;
  std::optional<int64_t> choose;
};

// What Mosaic derives and stores on each stream.
struct DerivedWeight {
  double proportion = 0;  // normalised
  double repeat = 0;      // choose / samples
  int64_t choose = 0;     // samples drawn per epoch
};

struct Weighting {
  std::vector<DerivedWeight> streams;
  int64_t epoch_size = 0;  // sum of choose
};

// apply_weights(streams, samples_per_stream, choose_per_epoch, seed).
// Errors (ValueError, Mosaic's texts): relative and absolute weights mixed,
// epoch_size with absolute weights, more than one weight on a stream,
// negative weights, stream counts that disagree.
Result<Weighting> ApplyWeights(std::span<const StreamWeight> weights, std::span<const int64_t> samples_per_stream,
                               std::optional<int64_t> choose_per_epoch, uint64_t seed);

// numpy's float64 sum (pairwise, 8-way unrolled blocks).
double NumpySum(std::span<const double> x);

// epoch_size as Mosaic accepts it: an integer, or a number with suffix
// k/m/b/t (x10^3/6/9/12), fractions allowed ("1.5k" -> 1500). Else ValueError.
Result<int64_t> ParseEpochSize(std::string_view text);

}  // namespace sluice::planner

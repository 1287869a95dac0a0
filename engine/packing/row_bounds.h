// Document boundaries of packed rows, as flash-attention's varlen functions
// take them (cu_seqlens): from a row's segment ids (RowPacker::Pop's
// `segments`: 1, 2, .. per document piece, contiguous, 0 for padding at
// the end), the start of each piece in the row and the end of the last.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>

namespace sluice {

// Writes `bounds` (segments.size() + 1 entries, a fixed shape: a row of
// seq_len tokens has at most seq_len pieces): bounds[0] = 0, bounds[k] the
// start of piece k + 1 for k < pieces, bounds[pieces] the end of the last
// piece (the row's first padding token, or seq_len), and every later entry
// repeats that end (zero-length sequences, which varlen attention skips).
// Returns the pieces. A row of padding only has 0 pieces (all zeros).
int32_t RowBounds(std::span<const int32_t> segments, std::span<int32_t> bounds);

}  // namespace sluice

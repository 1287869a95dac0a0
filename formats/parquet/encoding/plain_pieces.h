// PLAIN BYTE_ARRAY values of a page body that lies in pieces rather than in
// one buffer: a snappy page of incompressible values (formats/codec's
// SnappyPieces), whose body is its pieces laid end to end. A value wholly
// inside one piece is handed out as a view of that piece (a literal: the
// file's bytes, no copy); the few that straddle two pieces, and whatever
// the caller gathers (a v1 page's levels), are copied to `scratch`, one
// after another, after what the pieces already hold there.
// Not thread-safe; the pieces and `scratch` must outlive the views.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "formats/parquet/encoding/deferred_gathers.h"

namespace sluice::parquet {

class PiecewiseBody {
 public:
  // scratch[0, scratch_used) may hold pieces; gathered bytes go after
  // them, up to scratch_capacity.
  PiecewiseBody(std::span<const std::string_view> pieces, char* scratch, uint64_t scratch_used,
                uint64_t scratch_capacity);

  uint64_t size() const { return size_; }

  // From now on FindByteArrays reserves the scratch of a value of at least
  // DeferredGathers::kFrom bytes that straddles pieces and adds it to
  // *deferred instead of copying it (its bytes are written by Ensure).
  void DeferLargeGathers(DeferredGathers* deferred) { deferred_ = deferred; }
  uint64_t scratch_used() const { return scratch_used_; }

  // The body's 4 bytes at `from` as a little-endian number; false when
  // they pass its end.
  bool Load32(uint64_t from, uint32_t* out);
  // Copies the body's bytes [from, from + n) to the next n bytes of scratch
  // and returns a view of them; false when they pass the body's end or
  // scratch has no room.
  bool Gather(uint64_t from, uint64_t n, std::string_view* out);

  // `count` BYTE_ARRAY values from offset `from` into out[0, count), as
  // PlainDecoder::DecodeByteArrays would find them in the whole body (the
  // same bytes; views of a piece, or of scratch for a value across two).
  // Returns false when they are not all there: decode the whole body with
  // DecodeByteArrays for the error (out is then partly written, and values
  // may have been deferred: forget them with DeferredGathers::Truncate).
  bool FindByteArrays(uint64_t from, size_t count, std::string_view* out);

 private:
  // Moves to the piece holding offset `at` (< size()).
  void Seek(uint64_t at);
  // As Gather, but the bytes are left for *deferred_ to copy (false when it
  // refuses them: then they are copied).
  bool Defer(uint64_t from, uint64_t n, std::string_view* out);

  std::span<const std::string_view> pieces_;
  char* scratch_;
  uint64_t scratch_used_;
  uint64_t scratch_capacity_;
  uint64_t size_ = 0;
  size_t piece_ = 0;         // the current piece
  uint64_t piece_start_ = 0;  // its offset in the body
  DeferredGathers* deferred_ = nullptr;
  std::vector<std::string_view> segments_;  // Defer's, reused
};

}  // namespace sluice::parquet

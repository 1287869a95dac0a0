#include "formats/parquet/encoding/plain_pieces.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace sluice::parquet {

PiecewiseBody::PiecewiseBody(std::span<const std::string_view> pieces, char* scratch,
                             uint64_t scratch_used, uint64_t scratch_capacity)
    : pieces_(pieces), scratch_(scratch), scratch_used_(scratch_used),
      scratch_capacity_(scratch_capacity) {
  for (std::string_view p : pieces) size_ += p.size();
}

void PiecewiseBody::Seek(uint64_t at) {
  if (at < piece_start_) {  // offsets mostly grow: start over when not
    piece_ = 0;
    piece_start_ = 0;
  }
  while (at - piece_start_ >= pieces_[piece_].size()) {
    piece_start_ += pieces_[piece_].size();
    ++piece_;
  }
}

bool PiecewiseBody::Load32(uint64_t from, uint32_t* out) {
  if (from > size_ || size_ - from < 4) return false;
  Seek(from);
  const std::string_view p = pieces_[piece_];
  const uint64_t off = from - piece_start_;
  char bytes[4];
  if (p.size() - off >= 4) {
    std::memcpy(bytes, p.data() + off, 4);
  } else {
    for (uint64_t i = 0; i < 4; ++i) {
      Seek(from + i);
      bytes[i] = pieces_[piece_][from + i - piece_start_];
    }
  }
  // Parquet is little-endian, as every machine this builds for.
  static_assert(std::endian::native == std::endian::little);
  std::memcpy(out, bytes, 4);
  return true;
}

bool PiecewiseBody::Gather(uint64_t from, uint64_t n, std::string_view* out) {
  if (from > size_ || n > size_ - from || n > scratch_capacity_ - scratch_used_) return false;
  char* dst = scratch_ + scratch_used_;
  scratch_used_ += n;
  *out = std::string_view(dst, n);
  uint64_t at = from;
  while (n > 0) {
    Seek(at);
    const std::string_view p = pieces_[piece_];
    const uint64_t off = at - piece_start_;
    const uint64_t take = std::min<uint64_t>(n, p.size() - off);
    std::memcpy(dst, p.data() + off, take);
    dst += take;
    at += take;
    n -= take;
  }
  return true;
}

bool PiecewiseBody::Defer(uint64_t from, uint64_t n, std::string_view* out) {
  // Gather's checks, Gather's place.
  if (from > size_ || n > size_ - from || n > scratch_capacity_ - scratch_used_) return false;
  char* dst = scratch_ + scratch_used_;
  segments_.clear();
  for (uint64_t at = from, left = n; left > 0;) {
    Seek(at);
    const std::string_view p = pieces_[piece_];
    const uint64_t off = at - piece_start_;
    const uint64_t take = std::min<uint64_t>(left, p.size() - off);
    segments_.push_back(p.substr(off, take));
    at += take;
    left -= take;
  }
  if (!deferred_->Add(dst, segments_)) return Gather(from, n, out);
  scratch_used_ += n;
  *out = std::string_view(dst, n);
  return true;
}

bool PiecewiseBody::FindByteArrays(uint64_t from, size_t count, std::string_view* out) {
  uint64_t pos = from;
  for (size_t i = 0; i < count; ++i) {
    uint32_t length;
    if (!Load32(pos, &length)) return false;
    pos += 4;
    if (length > uint32_t{std::numeric_limits<int32_t>::max()} || length > size_ - pos) {
      return false;
    }
    if (length == 0) {
      out[i] = std::string_view(scratch_, 0);
      continue;
    }
    Seek(pos);
    const uint64_t off = pos - piece_start_;
    const std::string_view q = pieces_[piece_];
    if (q.size() - off >= length) {
      out[i] = std::string_view(q.data() + off, length);
      // The next length most likely lies a few values on (a hint only), as
      // in DecodeByteArrays.
      __builtin_prefetch(q.data() + std::min<uint64_t>(q.size() - 1, off + 4 * uint64_t{length}));
    } else if (deferred_ != nullptr && length >= DeferredGathers::kFrom) {
      if (!Defer(pos, length, &out[i])) return false;
    } else if (!Gather(pos, length, &out[i])) {
      return false;
    }
    pos += length;
  }
  return true;
}

}  // namespace sluice::parquet

#include "formats/parquet/encoding/delta_binary_packed.h"

#include <algorithm>
#include <string>

#include "formats/parquet/encoding/bit_unpack.h"

namespace sluice::parquet {
namespace {

constexpr uint64_t kMaxBlockSize = (uint64_t{1} << 31) - 128;
constexpr unsigned kMaxDeltaWidth = 64;

std::string Num(uint64_t v) { return std::to_string(v); }

}  // namespace

template <typename T>
Result<DeltaBinaryPackedDecoder<T>> DeltaBinaryPackedDecoder<T>::Create(
    std::string_view stream, std::string_view encoding, uint64_t base_offset) {
  DeltaBinaryPackedDecoder d(stream, encoding, base_offset);
  SLUICE_RETURN_IF_ERROR(d.ReadHeader());
  return d;
}

template <typename T>
Status DeltaBinaryPackedDecoder<T>::ReadHeader() {
  const uint64_t at = in_.offset();
  SLUICE_RETURN_IF_ERROR(in_.ReadUleb128("block size", &block_size_));
  if (block_size_ == 0 || block_size_ % 128 != 0 || block_size_ > kMaxBlockSize) {
    return in_.ErrorAt(at, "block size " + Num(block_size_) +
                               "; expected a multiple of 128 from 128 to 2147483520");
  }
  const uint64_t miniblocks_at = in_.offset();
  SLUICE_RETURN_IF_ERROR(in_.ReadUleb128("miniblock count", &miniblocks_));
  if (miniblocks_ == 0 || block_size_ % miniblocks_ != 0 ||
      (block_size_ / miniblocks_) % 32 != 0) {
    return in_.ErrorAt(miniblocks_at,
                       Num(miniblocks_) + " miniblocks in a block of " + Num(block_size_) +
                           " values; expected a divisor leaving a multiple of 32 values each");
  }
  per_miniblock_ = block_size_ / miniblocks_;
  SLUICE_RETURN_IF_ERROR(in_.ReadUleb128("total value count", &total_));
  int64_t first = 0;
  SLUICE_RETURN_IF_ERROR(in_.ReadZigZag("first value", &first));
  first_ = static_cast<uint64_t>(first);
  last_ = first_;
  header_size_ = in_.position();
  next_miniblock_ = miniblocks_;
  return Status::Ok();
}

template <typename T>
Status DeltaBinaryPackedDecoder<T>::StartBlock(SectionReader& in, uint64_t* min_delta,
                                               const uint8_t** widths,
                                               uint64_t* widths_at) const {
  int64_t min = 0;
  SLUICE_RETURN_IF_ERROR(in.ReadZigZag("block min delta", &min));
  *min_delta = static_cast<uint64_t>(min);
  SLUICE_RETURN_IF_ERROR(in.Need(miniblocks_, "miniblock bit widths"));
  *widths = in.current();
  *widths_at = in.offset();
  in.Skip(miniblocks_);
  return Status::Ok();
}

template <typename T>
Status DeltaBinaryPackedDecoder<T>::CheckMiniblock(const SectionReader& in,
                                                   const uint8_t* widths, uint64_t widths_at,
                                                   uint64_t index, unsigned* width,
                                                   size_t* bytes) const {
  *width = widths[index];
  if (*width > kMaxDeltaWidth) {
    return in.ErrorAt(widths_at + index, "miniblock bit width " + Num(*width) +
                                             "; expected 0 to 64");
  }
  const uint64_t need = per_miniblock_ / 8 * *width;
  if (need > in.remaining()) {  // the text is built only for the error
    return in.Need(need, "miniblock " + Num(index) + " (" + Num(per_miniblock_) + " values of " +
                             Num(*width) + " bits)");
  }
  *bytes = static_cast<size_t>(need);
  return Status::Ok();
}

template <typename T>
Status DeltaBinaryPackedDecoder<T>::Refill() {
  if (mini_left_ == 0) {
    if (next_miniblock_ == miniblocks_) {
      SLUICE_RETURN_IF_ERROR(StartBlock(in_, &min_delta_, &widths_, &widths_at_));
      next_miniblock_ = 0;
    }
    size_t bytes = 0;
    SLUICE_RETURN_IF_ERROR(
        CheckMiniblock(in_, widths_, widths_at_, next_miniblock_, &width_, &bytes));
    packed_ = in_.current();
    packed_bytes_ = bytes;
    in_.Skip(bytes);
    mini_left_ = per_miniblock_;
    ++next_miniblock_;
  }
  // Miniblocks hold multiples of 32 values: every chunk starts on a byte.
  const size_t n = static_cast<size_t>(std::min<uint64_t>(mini_left_, kChunk));
  UnpackBits64(packed_, packed_bytes_, width_, n, buf_);
  const size_t used = n / 8 * width_;
  packed_ += used;
  packed_bytes_ -= used;
  mini_left_ -= n;
  buf_pos_ = 0;
  buf_len_ = n;
  return Status::Ok();
}

template <typename T>
Status DeltaBinaryPackedDecoder<T>::Decode(size_t count, T* out) {
  if (count > values_left()) {
    return in_.Error("expected " + Num(count) + " values, found " + Num(values_left()) +
                     " (the header's total is " + Num(total_) + ")");
  }
  size_t i = 0;
  if (count > 0 && decoded_ == 0) {
    out[i++] = static_cast<T>(first_);
  }
  uint64_t last = last_;
  while (i < count) {
    if (buf_pos_ == buf_len_) SLUICE_RETURN_IF_ERROR(Refill());
    const size_t n = std::min(count - i, buf_len_ - buf_pos_);
    const uint64_t* d = buf_ + buf_pos_;
    const uint64_t step = min_delta_;
    for (size_t k = 0; k < n; ++k) {
      last += step + d[k];
      out[i + k] = static_cast<T>(last);
    }
    buf_pos_ += n;
    i += n;
  }
  last_ = last;
  decoded_ += count;
  return Status::Ok();
}

template <typename T>
Result<size_t> DeltaBinaryPackedDecoder<T>::EncodedSize() const {
  SectionReader walk(stream_, in_.encoding(), in_.base_offset());
  walk.Skip(header_size_);
  uint64_t left = total_ > 0 ? total_ - 1 : 0;
  while (left > 0) {
    uint64_t min_delta = 0;
    const uint8_t* widths = nullptr;
    uint64_t widths_at = 0;
    SLUICE_RETURN_IF_ERROR(StartBlock(walk, &min_delta, &widths, &widths_at));
    for (uint64_t m = 0; m < miniblocks_ && left > 0; ++m) {
      unsigned width = 0;
      size_t bytes = 0;
      SLUICE_RETURN_IF_ERROR(CheckMiniblock(walk, widths, widths_at, m, &width, &bytes));
      walk.Skip(bytes);
      left -= std::min(left, per_miniblock_);
    }
  }
  return walk.position();
}

template class DeltaBinaryPackedDecoder<int32_t>;
template class DeltaBinaryPackedDecoder<int64_t>;

}  // namespace sluice::parquet

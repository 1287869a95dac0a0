#include "formats/parquet/encoding/rle_bit_packed.h"

#include <algorithm>
#include <string>

#include "base/bytes.h"
#include "formats/parquet/encoding/bit_unpack.h"

namespace sluice::parquet {
namespace {

constexpr uint64_t kMaxRunLength = (uint64_t{1} << 31) - 1;
constexpr unsigned kMaxRleWidth = 32;

}  // namespace

Result<RleBitPackedDecoder> RleBitPackedDecoder::Create(std::string_view runs, int bit_width,
                                                        std::string_view encoding,
                                                        uint64_t base_offset) {
  if (bit_width < 0 || bit_width > static_cast<int>(kMaxRleWidth)) {
    return EncodingError(encoding, base_offset,
                         "bit width " + std::to_string(bit_width) + "; expected 0 to 32");
  }
  return RleBitPackedDecoder(runs, static_cast<unsigned>(bit_width), encoding, base_offset);
}

Result<RleBitPackedDecoder> RleBitPackedDecoder::CreateWithLengthPrefix(
    std::string_view section, int bit_width, size_t* consumed, std::string_view encoding) {
  SectionReader in(section, encoding);
  SLUICE_RETURN_IF_ERROR(in.Need(4, "length prefix"));
  const uint32_t length = LoadLE<uint32_t>(in.current());
  in.Skip(4);
  if (length > in.remaining()) {
    return in.ErrorAt(0, "length prefix " + std::to_string(length) + "; expected at most the " +
                             std::to_string(in.remaining()) + " bytes after it");
  }
  *consumed = 4 + size_t{length};
  return Create(section.substr(4, length), bit_width, encoding, 4);
}

Result<RleBitPackedDecoder> RleBitPackedDecoder::CreateForDictionaryIndices(
    std::string_view section, std::string_view encoding) {
  SectionReader in(section, encoding);
  SLUICE_RETURN_IF_ERROR(in.Need(1, "bit width"));
  const unsigned width = in.ReadByte();
  if (width > kMaxRleWidth) {
    return in.ErrorAt(0, "dictionary index bit width " + std::to_string(width) +
                             "; expected 0 to 32");
  }
  return RleBitPackedDecoder(section.substr(1), width, encoding, 1);
}

Status RleBitPackedDecoder::NextRun(size_t produced, size_t count) {
  if (in_.remaining() == 0) {
    return in_.Error("expected " + std::to_string(count) + " values, found " +
                     std::to_string(produced) + " (the runs end)");
  }
  const uint64_t header_at = in_.offset();
  uint64_t header = 0;
  SLUICE_RETURN_IF_ERROR(in_.ReadUleb128("run header", &header));
  const uint64_t length = (header & 1) ? (header >> 1) * 8 : header >> 1;
  if (length == 0 || length > kMaxRunLength) {
    return in_.ErrorAt(header_at, std::string((header & 1) ? "bit-packed" : "RLE") +
                                      " run of " + std::to_string(length) +
                                      " values; expected 1 to 2147483647");
  }
  if ((header & 1) == 0) {
    const size_t value_bytes = (width_ + 7) / 8;
    SLUICE_RETURN_IF_ERROR(in_.Need(value_bytes, "RLE run value"));
    uint32_t value = 0;
    for (size_t i = 0; i < value_bytes; ++i) value |= uint32_t{in_.current()[i]} << (8 * i);
    if (width_ < 32 && (value >> width_) != 0) {
      return in_.Error("RLE run value " + std::to_string(value) + "; expected at most " +
                       std::to_string((uint64_t{1} << width_) - 1) + " (bit width " +
                       std::to_string(width_) + ")");
    }
    in_.Skip(value_bytes);
    repeat_ = true;
    value_ = value;
    run_left_ = length;
    return Status::Ok();
  }
  // A bit-packed run: keep the values whose bits are all present.
  const uint64_t run_bytes = (length / 8) * width_;
  uint64_t values = length;
  packed_bytes_ = in_.remaining();
  if (run_bytes <= packed_bytes_) {
    packed_bytes_ = run_bytes;
  } else {
    values = uint64_t{packed_bytes_} * 8 / width_;
  }
  packed_ = in_.current();
  in_.Skip(packed_bytes_);
  repeat_ = false;
  run_left_ = values;
  if (values == 0) {
    return in_.ErrorAt(header_at, "expected " + std::to_string(count) + " values, found " +
                                      std::to_string(produced) +
                                      " (a bit-packed run with no whole value before the end)");
  }
  return Status::Ok();
}

namespace {

// std::fill_n for long RLE runs (levels are mostly runs of thousands): blocks
// of 8 that the compiler stores as vectors at -O2, where the plain loop is a
// store per value.
void FillRun(uint32_t* out, size_t n, uint32_t value) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t* o = out + i;
    o[0] = value; o[1] = value; o[2] = value; o[3] = value;
    o[4] = value; o[5] = value; o[6] = value; o[7] = value;
  }
  for (; i < n; ++i) out[i] = value;
}

}  // namespace

Status RleBitPackedDecoder::Decode(size_t count, uint32_t* out) {
  size_t done = 0;
  while (done < count) {
    if (group_pos_ < group_len_) {
      const size_t n = std::min<size_t>(count - done, group_len_ - group_pos_);
      std::copy_n(group_ + group_pos_, n, out + done);
      group_pos_ += n;
      done += n;
      continue;
    }
    if (run_left_ == 0) SLUICE_RETURN_IF_ERROR(NextRun(done, count));
    const size_t want = count - done;
    if (repeat_) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(want, run_left_));
      FillRun(out + done, n, value_);
      run_left_ -= n;
      done += n;
      continue;
    }
    // Whole groups straight into the output, a split group through group_.
    const size_t whole = static_cast<size_t>(std::min<uint64_t>(want, run_left_)) / 8 * 8;
    if (whole > 0) {
      UnpackBits32(packed_, packed_bytes_, width_, whole, out + done);
      const size_t bytes = whole / 8 * width_;
      packed_ += bytes;
      packed_bytes_ -= bytes;
      run_left_ -= whole;
      done += whole;
      continue;
    }
    LoadGroup();
  }
  return Status::Ok();
}

Status RleBitPackedDecoder::Skip(size_t count) {
  // Skips in RLE runs and over whole groups unpack nothing.
  size_t done = 0;
  while (done < count) {
    if (group_pos_ < group_len_) {
      const unsigned n = static_cast<unsigned>(std::min<size_t>(count - done, group_len_ - group_pos_));
      group_pos_ += n;
      done += n;
      continue;
    }
    if (run_left_ == 0) SLUICE_RETURN_IF_ERROR(NextRun(done, count));
    const uint64_t n = std::min<uint64_t>(count - done, run_left_);
    if (repeat_) {
      run_left_ -= n;
      done += n;
      continue;
    }
    const size_t whole = static_cast<size_t>(n) / 8 * 8;
    if (whole > 0) {
      const size_t bytes = whole / 8 * width_;
      packed_ += bytes;
      packed_bytes_ -= bytes;
      run_left_ -= whole;
      done += whole;
      continue;
    }
    LoadGroup();
  }
  return Status::Ok();
}

void RleBitPackedDecoder::LoadGroup() {
  const unsigned n = static_cast<unsigned>(std::min<uint64_t>(8, run_left_));
  UnpackBits32(packed_, packed_bytes_, width_, n, group_);
  const size_t bytes = std::min<size_t>(width_, packed_bytes_);
  packed_ += bytes;
  packed_bytes_ -= bytes;
  run_left_ -= n;
  group_pos_ = 0;
  group_len_ = n;
}

}  // namespace sluice::parquet

// The RLE/bit-packed hybrid (Parquet's RLE encoding): definition and
// repetition levels, dictionary indices (RLE_DICTIONARY, PLAIN_DICTIONARY)
// and RLE-encoded booleans.
//
// The encoded data is a sequence of runs, each a ULEB128 header then
//   header & 1 == 0: an RLE run of (header >> 1) copies of one value stored
//                    in ceil(width / 8) little-endian bytes;
//   header & 1 == 1: a bit-packed run of (header >> 1) groups of 8 values,
//                    packed LSB first in width bits each.
// How the page frames it (see the Create* factories):
//   data page v1 levels, RLE booleans (v1 and v2):  4-byte LE length, runs
//   data page v2 levels:  runs only; the page header gives their length
//   dictionary indices:   1-byte bit width (at most 32), runs to the end
//
// Checks: width 0..32; each run length 1..2^31-1 (the specification's
// range); an RLE run's value fits in `width` bits; a run header and an RLE
// value must lie inside the data. A bit-packed run whose bytes run past the
// end of the data is cut to the values its bytes hold in full (writers pad
// the last run to a multiple of 8 values, and some omit the padding bytes);
// asking for a value past them is an error. Values are not compared with a
// maximum level or the dictionary's size: the caller does that.
//
// A decoder borrows the data (which must outlive it) and is a cursor: not
// thread-safe, cheap to copy (a copy continues independently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"
#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {

class RleBitPackedDecoder {
 public:
  // Over `runs` (no length prefix) of `bit_width`-bit values (0..32).
  // `encoding` names the encoding in errors ("RLE", "RLE_DICTIONARY"); error
  // offsets start at `base_offset` (where `runs` begins in the caller's
  // section). Errors: a bit width above 32 (kCorrupt).
  static Result<RleBitPackedDecoder> Create(std::string_view runs, int bit_width,
                                            std::string_view encoding = "RLE",
                                            uint64_t base_offset = 0);

  // Over a 4-byte little-endian length followed by that many bytes of runs,
  // at the start of `section` (levels of a data page v1, RLE booleans).
  // `*consumed` is set to 4 + the length: where the next part of the page
  // (the values after the levels) starts. Errors: the length missing or
  // larger than the bytes after it.
  static Result<RleBitPackedDecoder> CreateWithLengthPrefix(std::string_view section,
                                                            int bit_width, size_t* consumed,
                                                            std::string_view encoding = "RLE");

  // Over a data page's dictionary indices: one byte of bit width (at most
  // 32), then runs to the end of `section`.
  static Result<RleBitPackedDecoder> CreateForDictionaryIndices(
      std::string_view section, std::string_view encoding = "RLE_DICTIONARY");

  int bit_width() const { return static_cast<int>(width_); }

  // Decodes the next `count` values into out[0..count). Errors (kCorrupt,
  // with the offset of the run or header at fault): the runs end before
  // `count` values ("expected <count> values, found <k> (the runs end)"),
  // a bad run header or RLE value. After an error the decoder must not be
  // used again; out[0..count) may hold a prefix of the values.
  Status Decode(size_t count, uint32_t* out);

  // Skips the next `count` values as Decode would read them (same errors).
  Status Skip(size_t count);

 private:
  RleBitPackedDecoder(std::string_view runs, unsigned width, std::string_view encoding,
                      uint64_t base_offset)
      : in_(runs, encoding, base_offset), width_(width) {}

  // Reads the next run header (and an RLE run's value). `produced` and
  // `count` describe the caller's request, for the error text.
  Status NextRun(size_t produced, size_t count);
  // Unpacks the next (up to) 8 values of the bit-packed run into group_.
  void LoadGroup();

  SectionReader in_;
  unsigned width_;
  bool repeat_ = false;     // the current run is an RLE run
  uint32_t value_ = 0;      // its value
  uint64_t run_left_ = 0;   // values left in the current run
  const uint8_t* packed_ = nullptr;  // next group of a bit-packed run
  size_t packed_bytes_ = 0;          // bytes of the run at and after packed_
  // A bit-packed group split by the caller's count: its unread values.
  uint32_t group_[8] = {};
  unsigned group_pos_ = 0;
  unsigned group_len_ = 0;
};

}  // namespace sluice::parquet

#include "formats/parquet/encoding/bit_unpack.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "base/bytes.h"

namespace sluice::parquet {
namespace {

// Value I of a group of eight W-bit values that starts at `in`: one 8-byte
// load at the value's first byte, plus the ninth byte when the value reaches
// past it (only widths above 57 can).
template <unsigned W, typename T, size_t I>
inline T ExtractOne(const uint8_t* in) {
  constexpr size_t kBit = I * W;
  constexpr size_t kByte = kBit / 8;
  constexpr unsigned kShift = kBit % 8;
  uint64_t word = LoadLE<uint64_t>(in + kByte) >> kShift;
  if constexpr (kShift != 0 && kShift + W > 64) {
    word |= uint64_t{in[kByte + 8]} << (64 - kShift);
  }
  if constexpr (W == 64) {
    return static_cast<T>(word);
  } else {
    return static_cast<T>(word & ((uint64_t{1} << W) - 1));
  }
}

template <unsigned W, typename T, size_t... I>
inline void UnpackGroup(const uint8_t* in, T* out, std::index_sequence<I...>) {
  ((out[I] = ExtractOne<W, T, I>(in)), ...);
}

// A group of eight values occupies exactly W bytes; its loads read up to
// byte W + 8 (exclusive) from its start.
template <unsigned W>
constexpr size_t kGroupReach = W + 8;

template <unsigned W, typename T>
void UnpackWidth(const uint8_t* in, size_t in_size, size_t count, T* out) {
  if constexpr (W == 0) {
    std::fill_n(out, count, T{0});
    (void)in;
    (void)in_size;
  } else if constexpr (W == 8 || W == 16 || W == 32) {
    // Whole bytes a value (dictionary indices of up to 256 or 65,536
    // entries): a widening copy the compiler vectorizes, where the shifts
    // and masks below cost ~3 instructions a value. `count` values take
    // exactly count * W / 8 bytes, all inside the input.
    using Word = std::conditional_t<W == 8, uint8_t, std::conditional_t<W == 16, uint16_t, uint32_t>>;
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(LoadLE<Word>(in + i * sizeof(Word)));
    (void)in_size;
  } else {
    const size_t groups = count / 8;
    // Groups whose loads stay inside the input run straight from it.
    size_t direct = 0;
    if (in_size >= kGroupReach<W>) direct = std::min(groups, (in_size - kGroupReach<W>) / W + 1);
    for (size_t g = 0; g < direct; ++g) {
      UnpackGroup<W, T>(in + g * W, out + g * 8, std::make_index_sequence<8>{});
    }
    // The rest (at most two groups' worth of bytes before the end, plus a
    // partial group) through a zero-padded copy.
    for (size_t done = direct * 8; done < count; done += 8) {
      const size_t start = (done / 8) * W;
      uint8_t padded[kGroupReach<W> + 1] = {};
      std::memcpy(padded, in + start, std::min<size_t>(W, in_size - start));
      T group[8];
      UnpackGroup<W, T>(padded, group, std::make_index_sequence<8>{});
      std::copy_n(group, std::min<size_t>(8, count - done), out + done);
    }
  }
}

template <typename T>
using UnpackFn = void (*)(const uint8_t*, size_t, size_t, T*);

template <typename T, size_t... W>
constexpr std::array<UnpackFn<T>, sizeof...(W)> MakeTable(std::index_sequence<W...>) {
  return {&UnpackWidth<static_cast<unsigned>(W), T>...};
}

constexpr auto kUnpack32 = MakeTable<uint32_t>(std::make_index_sequence<33>{});
constexpr auto kUnpack64 = MakeTable<uint64_t>(std::make_index_sequence<65>{});

}  // namespace

void UnpackBits32(const uint8_t* in, size_t in_size, unsigned width, size_t count,
                  uint32_t* out) {
  kUnpack32[width](in, in_size, count, out);
}

void UnpackBits64(const uint8_t* in, size_t in_size, unsigned width, size_t count,
                  uint64_t* out) {
  kUnpack64[width](in, in_size, count, out);
}

}  // namespace sluice::parquet

#include "tests/formats/parquet/encoding/test_encoder.h"

#include <algorithm>
#include <bit>

namespace sluice::parquet::test {

std::string Uleb128(uint64_t v) {
  std::string out;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    if (v != 0) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (v != 0);
  return out;
}

std::string ZigZag(int64_t v) {
  return Uleb128((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

std::string Le32(uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
  return out;
}

std::string PackBits(const std::vector<uint64_t>& values, unsigned width) {
  std::string out((values.size() * width + 7) / 8, '\0');
  uint64_t bit = 0;
  for (uint64_t v : values) {
    for (unsigned k = 0; k < width; ++k, ++bit) {
      if ((v >> k) & 1) out[bit / 8] = static_cast<char>(out[bit / 8] | (1 << (bit % 8)));
    }
  }
  return out;
}

std::string EncodeRuns(const std::vector<HybridRun>& runs, unsigned width) {
  std::string out;
  for (const HybridRun& r : runs) {
    if (r.packed) {
      std::vector<uint64_t> v = r.values;
      v.resize((v.size() + 7) / 8 * 8, 0);
      out += Uleb128((v.size() / 8) << 1 | 1);
      out += PackBits(v, width);
    } else {
      out += Uleb128(r.count << 1);
      for (unsigned i = 0; i < (width + 7) / 8; ++i) out.push_back(static_cast<char>(r.value >> (8 * i)));
    }
  }
  return out;
}

std::string EncodeHybrid(const std::vector<uint32_t>& values, unsigned width) {
  std::vector<HybridRun> runs;
  size_t i = 0;
  while (i < values.size()) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (j - i >= 8) {
      runs.push_back({false, j - i, values[i], {}});
      i = j;
      continue;
    }
    // A bit-packed group of 8 (or what is left).
    HybridRun r{true, 0, 0, {}};
    for (size_t k = i; k < std::min(values.size(), i + 8); ++k) r.values.push_back(values[k]);
    if (!runs.empty() && runs.back().packed && runs.back().values.size() % 8 == 0) {
      runs.back().values.insert(runs.back().values.end(), r.values.begin(), r.values.end());
    } else {
      runs.push_back(r);
    }
    i += std::min<size_t>(8, values.size() - i);
  }
  return EncodeRuns(runs, width);
}

namespace {

// Deltas in the unsigned domain U of the column's width.
template <typename T, typename U>
std::string EncodeDelta(const std::vector<T>& values, uint64_t block_size, uint64_t miniblocks,
                        uint8_t unused_width) {
  std::string out = Uleb128(block_size) + Uleb128(miniblocks) + Uleb128(values.size()) +
                    ZigZag(values.empty() ? 0 : static_cast<int64_t>(values[0]));
  const uint64_t per_mini = block_size / miniblocks;
  for (size_t start = 1; start < values.size(); start += block_size) {
    const size_t end = std::min<size_t>(values.size(), start + block_size);
    std::vector<U> deltas;
    for (size_t i = start; i < end; ++i) {
      deltas.push_back(static_cast<U>(static_cast<U>(values[i]) - static_cast<U>(values[i - 1])));
    }
    using S = std::make_signed_t<U>;
    S min = static_cast<S>(deltas[0]);
    for (U d : deltas) min = std::min(min, static_cast<S>(d));
    out += ZigZag(min);
    std::string widths, bodies;
    for (uint64_t m = 0; m < miniblocks; ++m) {
      const size_t a = m * per_mini;
      if (a >= deltas.size()) {
        widths.push_back(static_cast<char>(unused_width));
        continue;
      }
      std::vector<uint64_t> rel;
      unsigned width = 0;
      for (size_t i = a; i < std::min<size_t>(deltas.size(), a + per_mini); ++i) {
        const U r = static_cast<U>(deltas[i] - static_cast<U>(min));
        rel.push_back(r);
        width = std::max<unsigned>(width, static_cast<unsigned>(std::bit_width(r)));
      }
      rel.resize(per_mini, 0);
      widths.push_back(static_cast<char>(width));
      bodies += PackBits(rel, width);
    }
    out += widths + bodies;
  }
  return out;
}

}  // namespace

std::string EncodeDeltaInt32(const std::vector<int32_t>& values, uint64_t block_size,
                             uint64_t miniblocks, uint8_t unused_width) {
  return EncodeDelta<int32_t, uint32_t>(values, block_size, miniblocks, unused_width);
}

std::string EncodeDeltaInt64(const std::vector<int64_t>& values, uint64_t block_size,
                             uint64_t miniblocks, uint8_t unused_width) {
  return EncodeDelta<int64_t, uint64_t>(values, block_size, miniblocks, unused_width);
}

std::string EncodeDeltaLength(const std::vector<std::string>& values) {
  std::vector<int32_t> lengths;
  std::string bytes;
  for (const std::string& v : values) {
    lengths.push_back(static_cast<int32_t>(v.size()));
    bytes += v;
  }
  return EncodeDeltaInt32(lengths) + bytes;
}

std::string EncodeDeltaByteArray(const std::vector<std::string>& values) {
  std::vector<int32_t> prefixes;
  std::vector<std::string> suffixes;
  std::string previous;
  for (const std::string& v : values) {
    size_t p = 0;
    while (p < v.size() && p < previous.size() && v[p] == previous[p]) ++p;
    prefixes.push_back(static_cast<int32_t>(p));
    suffixes.push_back(v.substr(p));
    previous = v;
  }
  return EncodeDeltaInt32(prefixes) + EncodeDeltaLength(suffixes);
}

std::string EncodePlainByteArrays(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += Le32(static_cast<uint32_t>(v.size())) + v;
  return out;
}

std::string EncodeByteStreamSplit(std::string_view values, size_t width) {
  const size_t n = values.size() / width;
  std::string out(values.size(), '\0');
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < width; ++k) out[k * n + i] = values[i * width + k];
  }
  return out;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

}  // namespace sluice::parquet::test

// Shared helpers for the formats_codec tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::testing {

// Deterministic, moderately compressible bytes: repeated words mixed with a
// xorshift stream, so every codec has both matches and literals to encode.
inline std::string TestBytes(size_t n, uint64_t seed = 1) {
  static constexpr std::string_view kWords[] = {"shard", "sample", "mosaic",
                                                std::string_view("\0\0\0\1", 4)};
  std::string s;
  s.reserve(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  while (s.size() < n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (x % 3 == 0) {
      s.push_back(static_cast<char>(x >> 32));
    } else {
      s.append(kWords[(x >> 8) % 4]);
    }
  }
  s.resize(n);
  return s;
}

}  // namespace sluice::testing

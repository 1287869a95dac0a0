// Internal: numpy generators as Mosaic makes them, default_rng(seed + add),
// with the sum taken exactly (no 64-bit wrap-around).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/random/numpy_random.h"

namespace sluice::planner {

inline numpy::Generator MakeRng(uint64_t seed, uint64_t add = 0) {
  const unsigned __int128 s = static_cast<unsigned __int128>(seed) + add;
  std::vector<uint32_t> words;
  unsigned __int128 v = s;
  do {
    words.push_back(static_cast<uint32_t>(v));
    v >>= 32;
  } while (v != 0);
  return numpy::Generator(std::span<const uint32_t>(words));
}

}  // namespace sluice::planner

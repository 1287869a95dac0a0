// What the Parquet read benches share: the process's CPU time, and a pass
// over a value's bytes that the compiler cannot drop (every byte read once,
// as a consumer reads them).
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstring>
#include <string_view>

namespace sluice::bench {

// User and system CPU seconds of the whole process (its threads included).
inline double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto s = [](timeval t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// A checksum of every byte of `f`.
inline uint64_t Touch(std::string_view f) {
  uint64_t a = 0, b = 0;
  size_t j = 0;
  for (; j + 16 <= f.size(); j += 16) {
    uint64_t w[2];
    std::memcpy(w, f.data() + j, 16);
    a += w[0];
    b ^= w[1];
  }
  for (; j < f.size(); ++j) a += static_cast<unsigned char>(f[j]);
  return a ^ b;
}

}  // namespace sluice::bench

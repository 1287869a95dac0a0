// Helpers shared by the libFuzzer targets in this folder (see README.md).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

// An invariant the target asserts: a failure is a finding (abort, so that
// libFuzzer saves the input as crash-*).
#define FUZZ_CHECK(cond, ...)                                              \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__,     \
                   __LINE__, #cond);                                       \
      std::fprintf(stderr, "" __VA_ARGS__);                                \
      std::fprintf(stderr, "\n");                                          \
      std::abort();                                                        \
    }                                                                      \
  } while (0)

namespace sluice::fuzz {

// True when `part` lies entirely inside `whole` (an empty view anywhere in
// or at the end of `whole`, or a null empty view, counts as inside).
inline bool Within(std::string_view part, std::string_view whole) {
  if (part.empty()) return true;
  const char* b = whole.data();
  const char* e = whole.data() + whole.size();
  return part.data() >= b && part.data() <= e &&
         part.size() <= static_cast<size_t>(e - part.data());
}

// Reads the fuzzer's bytes front to back: a few control bytes, then the rest.
class Input {
 public:
  Input(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}
  uint8_t Byte() {
    if (rest_.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return b;
  }
  uint32_t U16() { uint32_t lo = Byte(); return lo | (uint32_t{Byte()} << 8); }
  uint32_t U32() { uint32_t lo = U16(); return lo | (U16() << 16); }
  uint64_t U64() { uint64_t lo = U32(); return lo | (uint64_t{U32()} << 32); }
  // Up to n bytes.
  std::string_view Take(size_t n) {
    std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(out.size());
    return out;
  }
  std::string_view Rest() const { return rest_; }

 private:
  std::string_view rest_;
};

}  // namespace sluice::fuzz

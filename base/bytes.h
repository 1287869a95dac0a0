// Little-endian loads and stores and hex text, on raw byte buffers.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice {

// Reads a little-endian unsigned integer of sizeof(T) bytes at `p`.
// The caller guarantees the bytes exist.
template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86-64 and aarch64 are little-endian
  return v;
}

template <typename T>
inline void AppendLE(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

// Lower-case hex of `bytes`: "\x01\xab" -> "01ab".
std::string HexEncode(std::string_view bytes);

// Inverse of HexEncode (either case). False on odd length or a non-hex digit.
bool HexDecode(std::string_view hex, std::string* out);

}  // namespace sluice

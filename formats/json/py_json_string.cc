// json.dumps(str, ensure_ascii=True): every character outside ' '..'~' is
// escaped (so DEL becomes \u007f), with the short forms Python uses.
#include <cstdint>
#include <cstring>
#include <string>

#include "formats/json/py_json.h"

namespace sluice {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendU16Escape(std::string& out, uint32_t unit) {
  const char esc[6] = {'\\', 'u', kHex[(unit >> 12) & 0xf], kHex[(unit >> 8) & 0xf],
                       kHex[(unit >> 4) & 0xf], kHex[unit & 0xf]};
  out.append(esc, 6);
}

bool IsPlainAscii(unsigned char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; }

constexpr uint64_t kEachByteOne = 0x0101010101010101u, kEachByteHigh = 0x8080808080808080u;

// Whether a byte of `w` is below `n` (n <= 0x80): exact for the word as a
// whole, though not byte by byte (Bit Twiddling Hacks' hasless).
bool AnyByteBelow(uint64_t w, uint64_t n) {
  return ((w - kEachByteOne * n) & ~w & kEachByteHigh) != 0;
}
bool AnyByteIs(uint64_t w, uint64_t b) { return AnyByteBelow(w ^ (kEachByteOne * b), 1); }

// IsPlainAscii of eight bytes at once: a listing's million paths and tags
// are escaped whole (~8 instructions a byte, one at a time).
bool PlainAsciiWord(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return (w & kEachByteHigh) == 0 && !AnyByteBelow(w, 0x20) && !AnyByteIs(w, 0x7f) &&
         !AnyByteIs(w, '"') && !AnyByteIs(w, '\\');
}

}  // namespace

Status AppendPyJsonString(std::string& out, std::string_view utf8) {
  const size_t start_size = out.size();
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (n - run >= 8 && PlainAsciiWord(p + run)) run += 8;
    while (run < n && IsPlainAscii(p[run])) ++run;
    if (run > i) {
      out.append(utf8.data() + i, run - i);
      i = run;
      if (i == n) break;
    }
    const unsigned char c = p[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        default: AppendU16Escape(out, c); break;
      }
      ++i;
      continue;
    }
    // Multi-byte sequence. Encoded surrogates (ED A0..BF xx) are accepted:
    // a Python str may hold lone surrogates, ParsePyJson keeps them that
    // way, and json.dumps writes them as \udXXX.
    uint32_t cp = 0;
    size_t len = 0;
    uint32_t min = 0;
    if (c >= 0xc2 && c <= 0xdf) { cp = c & 0x1f; len = 2; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { cp = c & 0x0f; len = 3; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { cp = c & 0x07; len = 4; min = 0x10000; }
    else {
      out.resize(start_size);
      return InvalidArgumentError("invalid UTF-8 at byte offset " + std::to_string(i) +
                                  ": unexpected byte 0x" + std::string(1, kHex[c >> 4]) +
                                  std::string(1, kHex[c & 0xf]));
    }
    if (i + len > n) {
      out.resize(start_size);
      return InvalidArgumentError("invalid UTF-8 at byte offset " + std::to_string(i) +
                                  ": truncated sequence");
    }
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = p[i + k];
      if ((cc & 0xc0) != 0x80) {
        out.resize(start_size);
        return InvalidArgumentError("invalid UTF-8 at byte offset " + std::to_string(i + k) +
                                    ": expected a continuation byte");
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff) {
      out.resize(start_size);
      return InvalidArgumentError("invalid UTF-8 at byte offset " + std::to_string(i) +
                                  ": overlong or out-of-range sequence");
    }
    if (cp >= 0x10000) {
      const uint32_t v = cp - 0x10000;
      AppendU16Escape(out, 0xd800 | (v >> 10));
      AppendU16Escape(out, 0xdc00 | (v & 0x3ff));
    } else {
      AppendU16Escape(out, cp);
    }
    i += len;
  }
  out.push_back('"');
  return Status::Ok();
}

}  // namespace sluice

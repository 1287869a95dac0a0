#include "formats/parquet/decimal_text.h"

#include <vector>

namespace sluice::parquet {

std::string BigEndianOf(uint64_t v, int bytes) {
  std::string be(static_cast<size_t>(bytes), '\0');
  for (int i = 0; i < bytes; ++i) {
    be[static_cast<size_t>(bytes - 1 - i)] = static_cast<char>(v >> (8 * i));
  }
  return be;
}

std::string DecimalText(std::string_view be, int32_t scale) {
  // The magnitude of the two's-complement value, then its decimal digits
  // by repeated division of the byte string by ten.
  std::vector<uint8_t> mag(be.begin(), be.end());
  const bool negative = !mag.empty() && (mag[0] & 0x80);
  if (negative) {
    for (uint8_t& b : mag) b = static_cast<uint8_t>(~b);
    for (size_t i = mag.size(); i-- > 0;) {
      if (++mag[i] != 0) break;
    }
  }
  std::string digits;
  while (true) {
    bool zero = true;
    uint32_t rem = 0;
    for (uint8_t& b : mag) {
      const uint32_t cur = (rem << 8) | b;
      b = static_cast<uint8_t>(cur / 10);
      rem = cur % 10;
      if (b) zero = false;
    }
    digits.insert(digits.begin(), static_cast<char>('0' + rem));
    if (zero) break;
  }
  // str(Decimal): plain when the exponent is <= 0 and the adjusted
  // exponent is >= -6, else scientific.
  const int64_t exponent = -static_cast<int64_t>(scale);
  const int64_t adjusted = exponent + static_cast<int64_t>(digits.size()) - 1;
  std::string out = negative ? "-" : "";
  if (exponent <= 0 && adjusted >= -6) {
    const size_t s = static_cast<size_t>(scale);
    if (s == 0) return out + digits;
    if (digits.size() <= s) return out + "0." + std::string(s - digits.size(), '0') + digits;
    return out + digits.substr(0, digits.size() - s) + "." + digits.substr(digits.size() - s);
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  return out + "E" + (adjusted >= 0 ? "+" : "") + std::to_string(adjusted);
}

}  // namespace sluice::parquet

#include "engine/dataset/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/planner/mosaic_error.h"

namespace sluice {
namespace {

Status Unsupported(std::string_view text) {
  return planner::MosaicError("ValueError", "Unsupported value/suffix " + std::string(text) +
                                                ". Supported suffix are ['b', 'kb', 'mb', 'gb', "
                                                "'tb', 'pb', 'eb', 'zb', 'yb'].");
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Result<uint64_t> ParseDigits(std::string_view s, std::string_view text) {
  uint64_t v = 0;
  for (char c : s) {
    if (v > (uint64_t{1} << 63) / 10) return Unsupported(text);
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > (uint64_t{1} << 63)) return Unsupported(text);
  return v;
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t b = s.find_first_not_of(" \t\n\r\f\v");
  size_t e = s.find_last_not_of(" \t\n\r\f\v");
  s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  static constexpr std::string_view kSuffixes[] = {"kb", "mb", "gb", "tb", "pb", "eb", "zb", "yb"};
  for (size_t i = 0; i < std::size(kSuffixes); ++i) {
    std::string_view suffix = kSuffixes[i];
    if (s.size() < suffix.size() || s.compare(s.size() - 2, 2, suffix) != 0) continue;
    std::string number = s.substr(0, s.size() - 2);
    // float(): optional sign, digits, '.', exponent; Python strips spaces too.
    size_t nb = number.find_first_not_of(" \t");
    size_t ne = number.find_last_not_of(" \t");
    if (nb == std::string::npos) return Unsupported(text);
    number = number.substr(nb, ne - nb + 1);
    for (char c : number) {
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != '+' && c != '-') {
        return Unsupported(text);
      }
    }
    char* end = nullptr;
    double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v)) return Unsupported(text);
    double bytes = std::trunc(v * std::ldexp(1.0, 10 * static_cast<int>(i + 1)));
    if (bytes < 0 || bytes > std::ldexp(1.0, 63)) return Unsupported(text);
    return static_cast<uint64_t>(bytes);
  }
  if (s.size() >= 2 && s.back() == 'b' && AllDigits(std::string_view(s).substr(0, s.size() - 1))) {
    return ParseDigits(std::string_view(s).substr(0, s.size() - 1), text);
  }
  if (AllDigits(s)) return ParseDigits(s, text);
  return Unsupported(text);
}

}  // namespace sluice
